// Package testindexes writes the files of SAI and SASI indexes beside a
// real sstable, for tests: Cassandra's source holds no such fixtures
// (test/data has none on any branch), so they are made here from the
// layouts its writers use, each field below citing the writer.
//
//   - SAI (Cassandra 5.0, index/sai/disk/v1): every file but the
//     GroupComplete marker is framed by SAICodecUtils.writeHeader and
//     writeFooter (internal/format/sai's AppendFramed); GroupComplete is
//     an empty file (IndexDescriptor.createComponentOnDisk: Files.touch);
//     ColumnComplete's body is one byte, 0 for an index with terms
//     (ColumnCompletionMarkerUtil.create). The other bodies (block-packed
//     row ids, tries, postings) are opaque to every check Cassandra makes
//     at load (SAICodecUtils.validate and validateChecksum read the
//     framing and the checksum over them); here they are fixed bytes
//     naming the component, so a test can flip any byte of them.
//   - SASI (3.4 to 4.1, index/sasi/disk/OnDiskIndexBuilder.finish): a
//     real index of one text column of the sstable in PREFIX mode, built
//     from its rows: each distinct value a term, its token tree the
//     Murmur3 tokens of the partitions holding it and their Index.db
//     positions.
package testindexes

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"sort"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/format/index"
	"github.com/sstabletool/sstabletool/internal/format/sai"
)

// SAI writes a complete SAI build for the sstable whose Data.db is data:
// the per-sstable components (V1OnDiskFormat's SKINNY or, with clustering
// columns, WIDE_PER_SSTABLE_COMPONENTS) and, for each index, a literal
// index's components (LITERAL_COMPONENTS). It returns the component
// names written.
func SAI(data string, hasClustering bool, indexes ...string) ([]string, error) {
	d, _, err := format.ParseDescriptor(data)
	if err != nil {
		return nil, err
	}
	var names []string
	write := func(name string, b []byte) error {
		names = append(names, name)
		return os.WriteFile(d.Path(name), b, 0o644)
	}
	const version = "aa" // Version.LATEST in 5.0
	framed := func(name string) []byte {
		return sai.AppendFramed(nil, version, []byte("opaque body of "+name))
	}
	for _, part := range format.SAIPerSSTableComponents(hasClustering) {
		name := "SAI+" + version + "+" + part + ".db"
		b := framed(name)
		if part == format.SAIGroupComplete {
			b = nil
		}
		if err := write(name, b); err != nil {
			return nil, err
		}
	}
	for _, ix := range indexes {
		for _, part := range []string{format.SAIColumnComplete, format.SAIMeta, format.SAITermsData, format.SAIPostingLists} {
			name := "SAI+" + version + "+" + ix + "+" + part + ".db"
			b := framed(name)
			if part == format.SAIColumnComplete {
				b = sai.AppendFramed(nil, version, []byte{0})
			}
			if err := write(name, b); err != nil {
				return nil, err
			}
		}
	}
	return names, nil
}

// keyed is one partition: its Murmur3 token and Index.db position.
type keyed struct {
	token int64
	pos   int64
}

// SASI writes SI_<index>.db for the text (or ascii) column col of the
// Murmur3 sstable at data, in PREFIX mode, as OnDiskIndexBuilder
// version "ab" writes one data block and its super block (enough for the
// small fixtures: it refuses more terms than one block holds). It returns
// the component name.
func SASI(data, indexName, col string) (string, error) {
	s, err := sstable.Open(data, sstable.Options{})
	if err != nil {
		return "", err
	}
	defer s.Close()
	if s.Partitioner() != token.Murmur3 {
		return "", fmt.Errorf("%s: SASI only supports Murmur3Partitioner (SASIIndex.validateOptions)", data)
	}
	column := -1
	for i, c := range s.Schema().Regular {
		if c.Name == col {
			column = i
		}
	}
	if column < 0 {
		return "", fmt.Errorf("%s: no regular column %q", data, col)
	}
	// Index.db positions, by key.
	pos := map[string]int64{}
	scan := index.NewScanner(s.Index(), s.IndexCodec(), 0, false)
	for scan.Next() {
		pos[string(scan.Entry().Key)] = scan.EntryPos()
	}
	if err := scan.Err(); err != nil {
		return "", err
	}
	terms := map[string][]keyed{}
	var minKey, maxKey []byte
	keyType := s.KeyType()
	err = s.EachPartition(func(h *rows.PartitionHeader, dec *rows.Decoder) error {
		k := keyed{token: token.Murmur3.Token(h.Key).Int64(), pos: pos[string(h.Key)]}
		if minKey == nil || keyType.Compare(h.Key, minKey) < 0 {
			minKey = bytes.Clone(h.Key)
		}
		if maxKey == nil || keyType.Compare(h.Key, maxKey) > 0 {
			maxKey = bytes.Clone(h.Key)
		}
		for {
			u, err := dec.Next(false)
			if err != nil || u == nil {
				return err
			}
			if u.Kind != rows.KindRow {
				continue
			}
			for _, c := range u.Cells {
				if c.Column == column && !c.IsTombstone() {
					terms[string(c.Value)] = append(terms[string(c.Value)], k)
				}
			}
		}
	})
	if err != nil {
		return "", err
	}
	if len(terms) == 0 {
		return "", fmt.Errorf("%s: column %q holds no value", data, col)
	}
	b := buildSASI(terms, minKey, maxKey)
	name := "SI_" + indexName + ".db"
	return name, os.WriteFile(s.Path(name), b, 0o644)
}

// buildSASI lays out the file (OnDiskIndexBuilder.finish, PREFIX mode,
// a variable-size term type: TermSize.VARIABLE).
func buildSASI(terms map[string][]keyed, minKey, maxKey []byte) []byte {
	const block = 4096
	values := make([]string, 0, len(terms))
	for v := range terms {
		values = append(values, v)
	}
	sort.Strings(values) // UTF8Type and AsciiType compare bytes
	be := binary.BigEndian
	var out []byte
	shortBytes := func(b []byte) { out = be.AppendUint16(out, uint16(len(b))); out = append(out, b...) }
	align := func() { // alignToBlock: zeros to the next 4096 boundary
		for len(out)%block != 0 {
			out = append(out, 0)
		}
	}
	// Header: writeUTF(descriptor version), writeShort(termSize.size),
	// min and max term and key with a short length, writeUTF(mode),
	// writeBoolean(marksPartials: true, the three-argument constructor's),
	// then skipBytes to BLOCK_SIZE.
	shortBytes([]byte("ab"))
	out = be.AppendUint16(out, 0xFFFF) // -1: TermSize.VARIABLE
	shortBytes([]byte(values[0]))
	shortBytes([]byte(values[len(values)-1]))
	shortBytes(minKey)
	shortBytes(maxKey)
	shortBytes([]byte("PREFIX"))
	out = append(out, 1)
	align()

	// The data block (MutableDataBlock.flushAndClear): the term count,
	// a short offset per term, the terms (InMemoryTerm.serialize: a short
	// length with no partial bit, a PREFIX term being whole, then the
	// bytes; writeTerm: the byte 0 and the int offset of the term's
	// token tree among the block's trees), zeros to the block's end; then
	// the int -1 (not SPARSE), the token trees (TokenTreeBuilder.write),
	// zeros to the next boundary.
	var body []byte
	var offsets []uint16
	var trees []byte
	var all []keyed
	for _, v := range values {
		offsets = append(offsets, uint16(len(body)))
		body = be.AppendUint16(body, uint16(len(v)))
		body = append(body, v...)
		body = append(body, 0)
		body = be.AppendUint32(body, uint32(len(trees)))
		trees = append(trees, tokenTree(terms[v])...)
		all = append(all, terms[v]...)
	}
	if 4+2*len(values)+len(body) >= block {
		panic("testindexes: more terms than one SASI block holds")
	}
	dataBlock := len(out)
	out = be.AppendUint32(out, uint32(len(values)))
	for _, o := range offsets {
		out = be.AppendUint16(out, o)
	}
	out = append(out, body...)
	align()
	out = be.AppendUint32(out, 0xFFFFFFFF)
	out = append(out, trees...)
	align()
	// The super block (DataBuilderLevel.flushSuperBlock(true)): the token
	// tree of every term's keys, aligned.
	super := len(out)
	out = append(out, tokenTree(all)...)
	align()
	// The level index: no pointer level, the data level's one block, the
	// super blocks; then where the level index starts.
	levels := len(out)
	out = be.AppendUint32(out, 0)
	out = be.AppendUint32(out, 1)
	out = be.AppendUint64(out, uint64(dataBlock))
	out = be.AppendUint32(out, 1)
	out = be.AppendUint64(out, uint64(super))
	return be.AppendUint64(out, uint64(levels))
}

// tokenTree writes a token tree of one leaf, the root
// (AbstractTokenTreeBuilder.write with numBlocks 1, so unaligned): the
// header (info byte 3: a leaf and the last; the token count as a short;
// the min and max token; the AB magic 0x5A51; the token count, min and
// max token as longs; padded to 64 bytes), then per token a 16-byte entry
// (a short type: SIMPLE, 0, for one position; the short 0; the token; the
// position as an int). Keys with the same token share an entry (PACKED
// for two small positions).
func tokenTree(keys []keyed) []byte {
	byToken := map[int64][]int64{}
	for _, k := range keys {
		byToken[k.token] = append(byToken[k.token], k.pos)
	}
	var toks []int64
	for t := range byToken {
		toks = append(toks, t)
	}
	sort.Slice(toks, func(i, j int) bool { return toks[i] < toks[j] })
	be := binary.BigEndian
	var out []byte
	out = append(out, 3)
	out = be.AppendUint16(out, uint16(len(toks)))
	out = be.AppendUint64(out, uint64(toks[0]))
	out = be.AppendUint64(out, uint64(toks[len(toks)-1]))
	out = be.AppendUint16(out, 0x5A51)
	out = be.AppendUint64(out, uint64(len(toks)))
	out = be.AppendUint64(out, uint64(toks[0]))
	out = be.AppendUint64(out, uint64(toks[len(toks)-1]))
	out = append(out, make([]byte, 64-len(out))...)
	for _, t := range toks {
		p := byToken[t]
		sort.Slice(p, func(i, j int) bool { return p[i] < p[j] })
		switch len(p) {
		case 1: // SimpleLeafEntry
			out = be.AppendUint16(out, 0)
			out = be.AppendUint16(out, 0)
			out = be.AppendUint64(out, uint64(t))
			out = be.AppendUint32(out, uint32(p[0]))
		default: // PackedCollisionLeafEntry: the smaller as the short
			out = be.AppendUint16(out, 2)
			out = be.AppendUint16(out, uint16(p[0]))
			out = be.AppendUint64(out, uint64(t))
			out = be.AppendUint32(out, uint32(p[1]))
		}
	}
	return out
}
