package stats

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sort"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/reader"
)

// MetadataType is a component's ordinal in io/sstable/metadata/MetadataType.java,
// which is both its table-of-contents tag and its place in the file.
type MetadataType int32

const (
	TypeValidation MetadataType = iota
	TypeCompaction
	TypeStats
	TypeHeader
	numTypes
)

var typeNames = [...]string{"validation metadata", "compaction metadata", "stats metadata", "serialization header"}

func (t MetadataType) String() string {
	if t >= 0 && t < numTypes {
		return typeNames[t]
	}
	return fmt.Sprintf("MetadataType(%d)", int32(t))
}

// NoCompressionRatio is the compression ratio Statistics.db records for an
// uncompressed Data.db (MetadataCollector.NO_COMPRESSION_RATIO); a
// compressed one records compressed/uncompressed bytes, never -1.
const NoCompressionRatio = -1.0

// Statistics is a decoded Statistics.db. A nil component is absent from
// the file (Cassandra always writes all four).
type Statistics struct {
	// Version is the sstable version the values belong to: set by Decode
	// and Convert; Encode refuses another version unless it is empty.
	Version format.Version

	Validation *Validation
	Compaction *Compaction
	Stats      *Stats
	Header     *Header
}

// checksumSize is the CRC32 after the count, the TOC and each component (na+).
const checksumSize = 4

// headerSize is the byte length of the count, table of contents and their
// checksums: where the first component starts.
func headerSize(n int, v format.Version) int {
	size := 4 + 8*n
	if v.HasMetadataChecksum {
		size += 2 * checksumSize
	}
	return size
}

// ReadFile reads and decodes a Statistics.db; errors name the file.
func ReadFile(path string, v format.Version) (*Statistics, error) {
	b, err := reader.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := Decode(b, v)
	if err != nil {
		return nil, corrupt.WithFile(err, path)
	}
	return s, nil
}

// Decode decodes a whole Statistics.db written in version v, verifying the
// checksums of na and later. The result does not alias b. Errors are
// *corrupt.Error naming the component, the byte offset and what was
// expected there.
func Decode(b []byte, v format.Version) (*Statistics, error) {
	b = bytes.Clone(b)
	top := &cursor{b: b, part: "table of contents:"}
	count := top.i32("component count")
	if v.HasMetadataChecksum {
		top.checksum(0, 4, "component count")
	}
	if top.err != nil {
		return nil, top.err
	}
	if count < 1 || count > int32(numTypes) {
		top.fail(0, fmt.Sprintf("a component count between 1 and %d, found %d", numTypes, count), nil)
		return nil, top.err
	}
	n := int(count)
	tocStart := top.pos
	toc := top.bytes(8*n, "table of contents")
	if v.HasMetadataChecksum && top.err == nil {
		// The second checksum continues over the count and the table.
		crc := crc32.Update(crc32.ChecksumIEEE(b[:4]), crc32.IEEETable, toc)
		top.checkCRC(crc, "component count and table of contents")
	}
	if top.err != nil {
		return nil, top.err
	}
	// Cassandra 3.x and 4.x look each component up by its type and seek to
	// its offset, so the table of contents may list them in any order
	// (ScyllaDB writes 3,2,0,1 over components laid out 0,1,2,3). Each
	// component ends where the next one in file order starts.
	type tocEntry struct {
		t      MetadataType
		off    int
		stored int // where the entry's offset is stored, for errors
	}
	list := make([]tocEntry, n)
	var seen [numTypes]bool
	entries := &cursor{b: toc, base: int64(tocStart), part: "table of contents:"}
	for i := 0; i < n; i++ {
		at := entries.pos
		t := MetadataType(entries.i32("component type"))
		if entries.err == nil && (t < 0 || t >= numTypes || seen[t]) {
			entries.fail(at, fmt.Sprintf("component type ordinals below %d, each listed once, found %d", numTypes, t), nil)
		}
		if entries.err != nil {
			return nil, entries.err
		}
		seen[t] = true
		at = entries.pos
		off := entries.i32(t.String() + " offset")
		if entries.err == nil && (off < int32(headerSize(n, v)) || int64(off) > int64(len(b))) {
			entries.fail(at, fmt.Sprintf("%s offset after the table of contents (byte %d) and within the file's %d bytes, found %d", t, headerSize(n, v), len(b), off), nil)
		}
		if entries.err != nil {
			return nil, entries.err
		}
		list[i] = tocEntry{t: t, off: int(off), stored: tocStart + at}
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].off < list[j].off })
	// From na on the components are read back to back after the table of
	// contents (each length from the next offset), so the first must start
	// right after it; before na each is found by seeking.
	if want := headerSize(n, v); v.HasMetadataChecksum && list[0].off != want {
		top.fail(list[0].stored, fmt.Sprintf("the first component to start right after the table of contents, at byte %d, found %d", want, list[0].off), nil)
		return nil, top.err
	}
	s := &Statistics{Version: v}
	for i, e := range list {
		t, start, end := e.t, e.off, len(b)
		if i+1 < n {
			end = list[i+1].off
		}
		minLen := 0
		if v.HasMetadataChecksum {
			minLen = checksumSize
		}
		if end-start < minLen {
			top.fail(e.stored, fmt.Sprintf("%s offsets leaving room for its checksum, found %d then %d", t, start, end), nil)
			return nil, top.err
		}
		body := b[start : end-minLen]
		c := &cursor{b: body, base: int64(start), part: t.String() + ":"}
		if v.HasMetadataChecksum {
			crcCur := &cursor{b: b[:end], pos: end - checksumSize, part: t.String() + ":"}
			crcCur.checkCRC(crc32.ChecksumIEEE(body), fmt.Sprintf("bytes %d..%d", start, end-checksumSize))
			if crcCur.err != nil {
				return nil, crcCur.err
			}
		}
		var pad int
		var trailing *[]byte
		switch t {
		case TypeValidation:
			s.Validation = decodeValidation(c)
			trailing = &s.Validation.TrailingBytes
		case TypeCompaction:
			s.Compaction = decodeCompaction(c)
			trailing = &s.Compaction.TrailingBytes
		case TypeStats:
			s.Stats = decodeStats(c, v)
			trailing = &s.Stats.TrailingBytes
			if c.err == nil {
				pad = s.Stats.padding(v)
			}
		case TypeHeader:
			s.Header = decodeHeader(c, v)
			trailing = &s.Header.TrailingBytes
		}
		if c.err != nil {
			return nil, c.err
		}
		if rest := body[c.pos:]; !isZeros(rest, pad) {
			*trailing = rest
		}
	}
	return s, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func isZeros(b []byte, n int) bool {
	if len(b) != n {
		return false
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// checksum verifies the CRC32 stored at the cursor over b[from:to].
func (c *cursor) checksum(from, to int, what string) {
	if c.err != nil {
		return
	}
	c.checkCRC(crc32.ChecksumIEEE(c.b[from:to]), what)
}

func (c *cursor) checkCRC(want uint32, what string) {
	at := c.pos
	got := uint32(c.i32("CRC32 of " + what))
	if c.err == nil && got != want {
		c.fail(at, fmt.Sprintf("CRC32 0x%08x of %s, found 0x%08x", want, what, got), ErrChecksum)
	}
}

// ErrChecksum is wrapped by the error for a checksum that does not match.
// It is corrupt.ErrChecksum, so one errors.Is check covers every component.
var ErrChecksum = corrupt.ErrChecksum

// Encode writes s as Statistics.db in version v, byte for byte as Cassandra
// would, padding included.
func (s *Statistics) Encode(v format.Version) ([]byte, error) {
	if s.Version.Name != "" && s.Version.Name != v.Name {
		return nil, fmt.Errorf("stats: values are for version %s; Convert them to %s before encoding", s.Version.Name, v.Name)
	}
	type component struct {
		t        MetadataType
		present  bool
		appendTo func([]byte) ([]byte, error)
		pad      func() int
		trailing []byte
	}
	var comps [numTypes]component
	if m := s.Validation; m != nil {
		comps[TypeValidation] = component{TypeValidation, true, m.appendTo, nil, m.TrailingBytes}
	}
	if m := s.Compaction; m != nil {
		comps[TypeCompaction] = component{TypeCompaction, true, m.appendTo, nil, m.TrailingBytes}
	}
	if m := s.Stats; m != nil {
		comps[TypeStats] = component{TypeStats, true,
			func(dst []byte) ([]byte, error) { return m.appendTo(dst, v) },
			func() int { return m.padding(v) }, m.TrailingBytes}
	}
	if m := s.Header; m != nil {
		comps[TypeHeader] = component{TypeHeader, true, func(dst []byte) ([]byte, error) { return m.appendTo(dst, v) }, nil, m.TrailingBytes}
	}
	n := 0
	for _, c := range comps {
		n += boolInt(c.present)
	}
	if n == 0 {
		return nil, errors.New("stats: no components to encode")
	}
	// The components go after room for the count and table of contents,
	// which are filled in once the offsets are known.
	hdr := headerSize(n, v)
	out := make([]byte, hdr, hdr+8192)
	toc := make([]byte, 0, 8*n)
	for _, c := range comps {
		if !c.present {
			continue
		}
		start := len(out)
		toc = binary.BigEndian.AppendUint32(toc, uint32(c.t))
		toc = binary.BigEndian.AppendUint32(toc, uint32(start))
		var err error
		if out, err = c.appendTo(out); err != nil {
			return nil, fmt.Errorf("%s: %w", c.t, err)
		}
		switch {
		case c.trailing != nil:
			out = append(out, c.trailing...)
		case c.pad != nil:
			out = append(out, make([]byte, c.pad())...)
		}
		if v.HasMetadataChecksum {
			out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[start:]))
		}
	}
	binary.BigEndian.PutUint32(out, uint32(n))
	pos := 4
	if v.HasMetadataChecksum {
		binary.BigEndian.PutUint32(out[pos:], crc32.ChecksumIEEE(out[:4]))
		pos += 4
	}
	pos += copy(out[pos:], toc)
	if v.HasMetadataChecksum {
		// The second checksum continues over the count and the table.
		binary.BigEndian.PutUint32(out[pos:], crc32.Update(crc32.ChecksumIEEE(out[:4]), crc32.IEEETable, toc))
	}
	return out, nil
}
