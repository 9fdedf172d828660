// Package sasi reads the structure of a SASI index file (SI_<index>.db,
// Cassandra 3.4 to 4.1) and checks it: index/sasi/disk/OnDiskIndexBuilder
// writes it, OnDiskIndex, OnDiskBlock and TokenTree read it. A SASI file
// has no checksum, so a damaged byte shows only where the structure, or
// what it says about the sstable, no longer holds; Check checks all of
// what Cassandra's reader interprets:
//
//	header (the first 4096-byte block, the rest zeros): writeUTF version
//	  ("aa" or "ab", disk/Descriptor.java), short term size (4, 8, 16 or
//	  -1 for variable, TermSize), min and max term and min and max
//	  partition key (each a short length and the bytes), writeUTF mode
//	  (PREFIX, CONTAINS or SPARSE), boolean: partial terms are marked;
//	blocks of 4096 bytes: pointer blocks (an int term count, a short
//	  offset per term, the terms: the term's bytes, preceded by a short
//	  length whose top bit marks a partial term when the size is
//	  variable, then an int: the block of the level below) and data
//	  blocks (the same, with each term followed by a byte: 0 and an int
//	  offset of its token tree in the block's second part, or n of 1 to 5
//	  and the term's n tokens, for SPARSE), a data block's second part
//	  starting at +4096 with an int (SPARSE: the offset of the block's
//	  combined token tree; else -1) and the token trees, up to the next
//	  4096 boundary; super blocks: a token tree of up to 64 data blocks'
//	  tokens;
//	token trees (TokenTree, AbstractTokenTreeBuilder): 64-byte node
//	  headers (an info byte: bit 0 a leaf, bit 1 the last leaf; a short
//	  token count; the node's min and max token; the root adds, from "ab",
//	  the short magic 0x5A51, then the tree's token count, min and max
//	  token), leaves of 16-byte entries (a short type SIMPLE, FACTORED,
//	  PACKED or OVERFLOW, a short, the token, an int) holding the
//	  positions in Index.db of the token's partition keys, with overflow
//	  positions after the entries; interior nodes' tokens and children at
//	  4096-byte blocks from the tree's start;
//	the level index: an int level count, each pointer level's block count
//	  and block positions (top level first), the data level's, then the
//	  super blocks'; and last, a long: where the level index starts.
//
// Beyond the structure, every token's key positions are checked against
// the sstable (the key at that Index.db position must have that token),
// which catches a damaged token or position wherever it is. Hand-written:
// no Go library reads SASI.
package sasi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sstabletool/sstabletool/corrupt"
)

// Layout constants (OnDiskIndexBuilder, TokenTreeBuilder).
const (
	BlockSize        = 4096
	treeBlockBytes   = 4096
	treeHeaderBytes  = 64
	treeEntryBytes   = 16
	treeSharedHeader = 19
	abMagic          = 0x5A51
	maxSparseTokens  = 5
	partialBit       = 15
)

// Modes are the index modes (OnDiskIndexBuilder.Mode).
var Modes = []string{"PREFIX", "CONTAINS", "SPARSE"}

// Index is what a SASI file's header and level index say.
type Index struct {
	Version       string `json:"version"`
	TermSize      int    `json:"term_size"`
	Mode          string `json:"mode"`
	MarksPartials bool   `json:"marks_partials"`
	MinTerm       []byte `json:"-"`
	MaxTerm       []byte `json:"-"`
	MinKey        []byte `json:"-"`
	MaxKey        []byte `json:"-"`
	PointerLevels int    `json:"pointer_levels"`
	DataBlocks    int    `json:"data_blocks"`
	SuperBlocks   int    `json:"super_blocks"`
	Terms         int64  `json:"terms"`
	Tokens        int64  `json:"tokens"` // in the data terms' token trees
}

// KeyToken says which token the partition key at an Index.db position
// has; Check asks it for every key position a token tree holds. An error
// (no entry starts there) is reported as damage of the SASI file.
type KeyToken func(indexPos int64) (int64, error)

// Sstable is what Check may ask of the sstable the index belongs to; each
// field may be nil, and what it would check is then left out.
type Sstable struct {
	// KeyToken: see its type.
	KeyToken KeyToken
	// Token is a partition key's Murmur3 token: the header's min and max
	// key must have tokens the index holds.
	Token func(key []byte) int64
	// Compare orders terms as the indexed column's type does: the data
	// terms must ascend.
	Compare func(a, b []byte) int
}

// Check reads the SASI file b and checks its structure and what it says
// about the sstable (as far as sst says). An empty file is what Cassandra
// writes for an sstable with nothing to index (DataTracker takes it as
// built); it returns a zero Index. Errors are *corrupt.Error with the
// byte offset (the file is the caller's to place).
func Check(b []byte, sst Sstable) (*Index, error) {
	if len(b) == 0 {
		return &Index{}, nil
	}
	c := &checker{b: b, keyToken: sst.KeyToken, sst: sst, tokens: map[int64]bool{}}
	if err := c.header(); err != nil {
		return nil, err
	}
	if err := c.levels(); err != nil {
		return nil, err
	}
	if err := c.bounds(); err != nil {
		return nil, err
	}
	return &c.ix, nil
}

// bounds checks the header's min and max term (the first and last data
// terms: OnDiskIndexBuilder.finish writes its term iterator's minTerm and
// maxTerm, the first and last it sorted) and, with sst.Token, that its
// min and max key are keys the index holds.
func (c *checker) bounds() error {
	if !bytes.Equal(c.ix.MinTerm, c.first) || !bytes.Equal(c.ix.MaxTerm, c.last) {
		return c.fail(0, "the header's min and max term to be the first and last data terms", "")
	}
	if c.sst.Token == nil {
		return nil
	}
	for _, k := range [][]byte{c.ix.MinKey, c.ix.MaxKey} {
		if t := c.sst.Token(k); !c.tokens[t] {
			return c.fail(0, "the header's min and max key to be keys the index holds", "key %x (token %d) is not", k, t)
		}
	}
	return nil
}

type checker struct {
	b        []byte
	ix       Index
	keyToken KeyToken
	sst      Sstable
	// tokens are every token a data term's tree holds; first and last
	// the first and last data terms, prev the term before (for order).
	tokens      map[int64]bool
	first, last []byte
	seen        bool
	// levelBlocks are each pointer level's block positions, top first;
	// then the data level's; supers the super blocks'.
	levelBlocks [][]int64
	dataBlocks  []int64
	supers      []int64
}

func (c *checker) fail(off int, expected string, format string, args ...any) error {
	var err error
	if format != "" {
		err = fmt.Errorf(format, args...)
	}
	return corrupt.New("", "", int64(off), expected, err)
}

// need fails unless n bytes are there at off.
func (c *checker) need(off, n int, what string) error {
	if off < 0 || n < 0 || off > len(c.b) || len(c.b)-off < n {
		return c.fail(off, what, "the file has %d bytes", len(c.b))
	}
	return nil
}

func (c *checker) u16(off int) int   { return int(binary.BigEndian.Uint16(c.b[off:])) }
func (c *checker) i16(off int) int   { return int(int16(binary.BigEndian.Uint16(c.b[off:]))) }
func (c *checker) i32(off int) int   { return int(int32(binary.BigEndian.Uint32(c.b[off:]))) }
func (c *checker) i64(off int) int64 { return int64(binary.BigEndian.Uint64(c.b[off:])) }

// shortBytes reads a short length and that many bytes (writeUTF,
// ByteBufferUtil.writeWithShortLength).
func (c *checker) shortBytes(off int, what string) ([]byte, int, error) {
	if err := c.need(off, 2, what+"'s length (2 bytes)"); err != nil {
		return nil, 0, err
	}
	n := c.u16(off)
	if err := c.need(off+2, n, fmt.Sprintf("%s (%d bytes)", what, n)); err != nil {
		return nil, 0, err
	}
	return c.b[off+2 : off+2+n], off + 2 + n, nil
}

func (c *checker) header() error {
	ver, off, err := c.shortBytes(0, "the version")
	if err != nil {
		return err
	}
	if v := string(ver); v != "aa" && v != "ab" {
		return c.fail(0, `the version "aa" or "ab" (sasi/disk/Descriptor.java)`, "found %q", v)
	}
	c.ix.Version = string(ver)
	if err := c.need(off, 2, "the term size"); err != nil {
		return err
	}
	switch ts := c.i16(off); ts {
	case 4, 8, 16, -1:
		c.ix.TermSize = ts
	default:
		return c.fail(off, "a term size of 4, 8, 16 or -1 (TermSize.of)", "found %d", ts)
	}
	off += 2
	for _, f := range []struct {
		dst  *[]byte
		what string
	}{{&c.ix.MinTerm, "the min term"}, {&c.ix.MaxTerm, "the max term"}, {&c.ix.MinKey, "the min key"}, {&c.ix.MaxKey, "the max key"}} {
		if *f.dst, off, err = c.shortBytes(off, f.what); err != nil {
			return err
		}
	}
	mode, next, err := c.shortBytes(off, "the mode")
	if err != nil {
		return err
	}
	ok := false
	for _, m := range Modes {
		ok = ok || m == string(mode)
	}
	if !ok {
		return c.fail(off, fmt.Sprintf("a mode of %v (OnDiskIndexBuilder.Mode)", Modes), "found %q", mode)
	}
	c.ix.Mode, off = string(mode), next
	if err := c.need(off, 1, "the marks-partials boolean"); err != nil {
		return err
	}
	switch c.b[off] {
	case 0, 1:
		c.ix.MarksPartials = c.b[off] == 1
	default:
		return c.fail(off, "a boolean, 0 or 1", "found %d", c.b[off])
	}
	off++
	if off > BlockSize {
		return c.fail(off, fmt.Sprintf("a header within the first %d bytes", BlockSize), "it ends at %d", off)
	}
	if err := c.need(off, BlockSize-off, "the header block's padding"); err != nil {
		return err
	}
	return c.zeros(off, BlockSize, "the header block's padding")
}

// zeros checks that b[from:to] is the zero padding alignToBlock leaves.
func (c *checker) zeros(from, to int, what string) error {
	for i := from; i < to; i++ {
		if c.b[i] != 0 {
			return c.fail(i, "a zero byte of "+what, "found 0x%02x", c.b[i])
		}
	}
	return nil
}

// maxCount bounds counts read from the file by what the file could hold.
func (c *checker) maxCount(per int) int { return len(c.b)/per + 1 }

func (c *checker) levels() error {
	end := len(c.b) - 8
	if err := c.need(end, 8, "the level index's position (the file's last 8 bytes)"); err != nil {
		return err
	}
	pos := c.i64(end)
	if pos < BlockSize || pos > int64(end-12) || pos%BlockSize != 0 {
		return c.fail(end, fmt.Sprintf("the level index's position: a multiple of %d within the file, before its last 20 bytes", BlockSize), "found %d", pos)
	}
	off := int(pos)
	offsets := func(what string) ([]int64, error) {
		if err := c.need(off, 4, what+"'s block count"); err != nil {
			return nil, err
		}
		n := c.i32(off)
		if n < 0 || n > c.maxCount(BlockSize) {
			return nil, c.fail(off, what+"'s block count", "found %d", n)
		}
		if err := c.need(off+4, 8*n, fmt.Sprintf("%s's %d block positions", what, n)); err != nil {
			return nil, err
		}
		out := make([]int64, n)
		for i := range out {
			p := c.i64(off + 4 + 8*i)
			if p < BlockSize || p >= pos || p%BlockSize != 0 || (i > 0 && p <= out[i-1]) {
				return nil, c.fail(off+4+8*i, fmt.Sprintf("block %d of %s: a multiple of %d after the header and the block before it, before the level index", i, what, BlockSize), "found %d", p)
			}
			out[i] = p
		}
		off += 4 + 8*n
		return out, nil
	}
	if err := c.need(off, 4, "the level count"); err != nil {
		return err
	}
	nl := c.i32(off)
	if nl < 0 || nl > 64 {
		return c.fail(off, "a level count of 0 to 64", "found %d", nl)
	}
	off += 4
	for i := 0; i < nl; i++ {
		blocks, err := offsets(fmt.Sprintf("pointer level %d", i))
		if err != nil {
			return err
		}
		c.levelBlocks = append(c.levelBlocks, blocks)
	}
	var err error
	if c.dataBlocks, err = offsets("the data level"); err != nil {
		return err
	}
	if len(c.dataBlocks) == 0 {
		return c.fail(off-4, "at least one data block (the builder always flushes one)", "found none")
	}
	if c.supers, err = offsets("the super blocks"); err != nil {
		return err
	}
	if off != end {
		return c.fail(off, fmt.Sprintf("the level index to end at the last 8 bytes, byte %d", end), "it ends at %d", off)
	}
	c.ix.PointerLevels, c.ix.DataBlocks, c.ix.SuperBlocks = nl, len(c.dataBlocks), len(c.supers)
	for i, blocks := range c.levelBlocks {
		below := len(c.dataBlocks)
		if i+1 < len(c.levelBlocks) {
			below = len(c.levelBlocks[i+1])
		}
		for _, p := range blocks {
			if err := c.block(int(p), false, below); err != nil {
				return err
			}
		}
	}
	for _, p := range c.dataBlocks {
		if err := c.block(int(p), true, 0); err != nil {
			return err
		}
	}
	for _, p := range c.supers {
		_, end, err := c.tree(int(p), c.keyToken)
		if err != nil {
			return err
		}
		if err := c.padded(end, "a super block's padding"); err != nil {
			return err
		}
	}
	return nil
}

// padded checks the zeros alignToBlock writes from end to the next
// 4096-byte boundary.
func (c *checker) padded(end int, what string) error {
	to := (end + BlockSize - 1) / BlockSize * BlockSize
	if err := c.need(end, to-end, what); err != nil {
		return err
	}
	return c.zeros(end, to, what)
}

// block checks one pointer or data block at off (OnDiskBlock): its terms
// within its 4096 bytes, a pointer term's block within the level below
// (below blocks), a data term's tokens or token tree.
func (c *checker) block(off int, data bool, below int) error {
	if err := c.need(off, BlockSize, "a 4096-byte block"); err != nil {
		return err
	}
	n := c.i32(off)
	if n < 1 || 4+2*n > BlockSize {
		return c.fail(off, "a block's term count: at least 1, its offsets within the block", "found %d", n)
	}
	base := off + 4 + 2*n
	blockEnd := off + BlockSize
	var combined map[int64]bool // SPARSE: the tokens of the block's combined tree
	treesAt := off + BlockSize + 4
	treesEnd := treesAt // where the block's token trees end
	if data {
		if err := c.need(off+BlockSize, 4, "the data block's token tree offset"); err != nil {
			return err
		}
		co := c.i32(off + BlockSize)
		switch {
		case c.ix.Mode == "SPARSE" && co >= 0:
			if co != 0 {
				return c.fail(off+BlockSize, "the combined token tree right after its offset (0)", "found %d", co)
			}
			tokens, end, err := c.tree(treesAt, c.keyToken)
			if err != nil {
				return err
			}
			c.ix.Tokens += int64(len(tokens))
			treesEnd = end
			combined = map[int64]bool{}
			for _, t := range tokens {
				combined[t] = true
			}
		case c.ix.Mode != "SPARSE" && co == -1:
		default:
			return c.fail(off+BlockSize, fmt.Sprintf("the token tree offset of a %s data block (%s)", c.ix.Mode,
				map[bool]string{true: "at least 0", false: "-1"}[c.ix.Mode == "SPARSE"]), "found %d", co)
		}
	}
	prev, end := -1, base
	for i := 0; i < n; i++ {
		rel := c.i16(off + 4 + 2*i)
		t := base + rel
		if rel < 0 || rel <= prev || t >= blockEnd || t < end {
			return c.fail(off+4+2*i, fmt.Sprintf("term %d's offset: after the term before it, within the block", i), "found %d", rel)
		}
		prev = rel
		var err error
		if end, err = c.term(t, blockEnd, data, below, treesAt, &treesEnd, combined); err != nil {
			return err
		}
		if data {
			c.ix.Terms++
		}
	}
	if err := c.zeros(end, blockEnd, "the block's padding"); err != nil {
		return err
	}
	if data {
		return c.padded(treesEnd, "the padding after the data block's token trees")
	}
	return nil
}

// term checks one term at off, which must end by blockEnd, and returns
// where it ends.
func (c *checker) term(off, blockEnd int, data bool, below, treesAt int, treesEnd *int, combined map[int64]bool) (int, error) {
	n := c.ix.TermSize
	at := off
	if n < 0 {
		if err := c.need(off, 2, "a term's length"); err != nil {
			return 0, err
		}
		l := c.u16(off)
		if l>>partialBit != 0 && !c.ix.MarksPartials {
			return 0, c.fail(off, "a term length without the partial bit (the index marks no partial terms)", "found 0x%04x", l)
		}
		n = l &^ (1 << partialBit)
		at += 2
	}
	termAt := at
	at += n
	if at > blockEnd {
		return 0, c.fail(off, "a term within its block", "it ends at %d, the block at %d", at, blockEnd)
	}
	if data {
		term := c.b[termAt:at]
		if c.seen && c.sst.Compare != nil && c.sst.Compare(c.last, term) >= 0 {
			return 0, c.fail(off, "data terms in ascending order", "")
		}
		if !c.seen {
			c.first, c.seen = term, true
		}
		c.last = term
	}
	if !data {
		if at+4 > blockEnd {
			return 0, c.fail(at, "a pointer term's block index within the block", "")
		}
		if k := c.i32(at); k < 0 || k >= below {
			return 0, c.fail(at, fmt.Sprintf("a pointer term's block index in the level below (0..%d)", below-1), "found %d", k)
		}
		return at + 4, nil
	}
	if at+1 > blockEnd {
		return 0, c.fail(at, "a data term's token count byte within the block", "")
	}
	switch k := int(int8(c.b[at])); {
	case k == 0 && c.ix.Mode != "SPARSE":
		if at+5 > blockEnd {
			return 0, c.fail(at, "a data term's token tree offset within the block", "")
		}
		to := c.i32(at + 1)
		if to < 0 {
			return 0, c.fail(at+1, "a token tree offset of at least 0", "found %d", to)
		}
		// The trees follow one another in the terms' order
		// (MutableDataBlock: offset += keys.serializedSize()).
		if treesAt+to != *treesEnd {
			return 0, c.fail(at+1, fmt.Sprintf("the token tree offset %d, where the term before's tree ends", *treesEnd-treesAt), "found %d", to)
		}
		tokens, end, err := c.tree(treesAt+to, c.keyToken)
		if err != nil {
			return 0, err
		}
		c.ix.Tokens += int64(len(tokens))
		*treesEnd = end
		return at + 5, nil
	case k >= 1 && k <= maxSparseTokens && c.ix.Mode == "SPARSE":
		if at+1+8*k > blockEnd {
			return 0, c.fail(at, fmt.Sprintf("a sparse term's %d tokens within the block", k), "")
		}
		for i := 0; i < k; i++ {
			tok := c.i64(at + 1 + 8*i)
			if !combined[tok] {
				return 0, c.fail(at+1+8*i, "a token the block's combined token tree holds", "token %d is not there", tok)
			}
		}
		return at + 1 + 8*k, nil
	default:
		want := "0 and a token tree offset"
		if c.ix.Mode == "SPARSE" {
			want = "1 to 5 tokens"
		}
		return 0, c.fail(at, fmt.Sprintf("a %s data term's token count: %s", c.ix.Mode, want), "found %d", k)
	}
}

// tree checks the token tree at start (TokenTree): its header and magic,
// every node, leaves' tokens ascending across the whole tree and their
// counts, min and max, the zero padding of each node of a tree of several
// blocks; with keyToken, every key position it holds. It returns the
// tree's tokens and where it ends.
func (c *checker) tree(start int, keyToken KeyToken) (tokens []int64, end int, err error) {
	fail := func(e error) ([]int64, int, error) { return nil, 0, e }
	if err := c.need(start, treeHeaderBytes, "a token tree's 64-byte root header"); err != nil {
		return fail(err)
	}
	off := start + treeSharedHeader
	if c.ix.Version == "ab" {
		if m := c.u16(off); m != abMagic {
			return fail(c.fail(off, fmt.Sprintf("the token tree magic 0x%04X (TokenTree.validateMagic)", abMagic), "found 0x%04X", m))
		}
		off += 2
	}
	count, minTok, maxTok := c.i64(off), c.i64(off+8), c.i64(off+16)
	// The root header is padded to 64 bytes (alignBuffer).
	if err := c.zeros(off+24, start+treeHeaderBytes, "the token tree root header's padding"); err != nil {
		return fail(err)
	}
	if count < 1 || count > int64(c.maxCount(treeEntryBytes)) {
		return fail(c.fail(off, "the token tree's token count", "found %d", count))
	}
	// Walk the tree level by level from the root, as it is written:
	// node positions relative to start.
	level := []int{0}
	multi := false // nodes are 4096-byte blocks, padded with zeros
	for depth := 0; len(level) > 0; depth++ {
		if depth > 16 {
			return fail(c.fail(start, "a token tree at most 16 levels deep", ""))
		}
		var next []int
		for _, rel := range level {
			nodeOff := start + rel
			if err := c.need(nodeOff, treeHeaderBytes, "a token tree node's header"); err != nil {
				return fail(err)
			}
			info, n := c.b[nodeOff], c.u16(nodeOff+1)
			nodeMin, nodeMax := c.i64(nodeOff+3), c.i64(nodeOff+11)
			if rel != 0 {
				if err := c.zeros(nodeOff+treeSharedHeader, nodeOff+treeHeaderBytes, "a token tree node header's padding"); err != nil {
					return fail(err)
				}
			}
			if nodeMin > nodeMax || n == 0 {
				return fail(c.fail(nodeOff, "a token tree node with tokens, min <= max", "%d tokens, %d..%d", n, nodeMin, nodeMax))
			}
			if info&1 == 0 { // interior: n tokens, n+1 children
				if info != 0 {
					return fail(c.fail(nodeOff, "an interior node's info byte 0", "found %d", info))
				}
				if err := c.need(nodeOff+treeHeaderBytes, 8*(2*n+1), "an interior node's tokens and children"); err != nil {
					return fail(err)
				}
				multi = true
				if err := c.nodeEnd(nodeOff, nodeOff+treeHeaderBytes+8*(2*n+1), &end); err != nil {
					return fail(err)
				}
				for i := 0; i <= n; i++ {
					ch := c.i64(nodeOff + treeHeaderBytes + 8*(n+i))
					if ch <= int64(rel) || ch%treeBlockBytes != 0 || ch > int64(len(c.b)-start) {
						return fail(c.fail(nodeOff+treeHeaderBytes+8*(n+i), "a child node's position: a later 4096-byte block of the tree", "found %d", ch))
					}
					next = append(next, int(ch))
				}
				continue
			}
			// A leaf: n entries, then the overflow positions.
			if info&^3 != 0 {
				return fail(c.fail(nodeOff, "a leaf's info byte 1 or 3", "found %d", info))
			}
			entries := nodeOff + treeHeaderBytes
			if err := c.need(entries, treeEntryBytes*n, fmt.Sprintf("a leaf's %d entries", n)); err != nil {
				return fail(err)
			}
			overflow := entries + treeEntryBytes*n
			overflowUsed := 0
			for i := 0; i < n; i++ {
				e := entries + treeEntryBytes*i
				typ, extra, tok, data := c.u16(e), c.u16(e+2), c.i64(e+4), c.i32(e+12)
				if len(tokens) > 0 && tok <= tokens[len(tokens)-1] {
					return fail(c.fail(e+4, "tokens in ascending order", "token %d after %d", tok, tokens[len(tokens)-1]))
				}
				if (i == 0 && tok != nodeMin) || (i == n-1 && tok != nodeMax) {
					return fail(c.fail(nodeOff+3, "the leaf's min and max tokens to be its first and last", ""))
				}
				tokens = append(tokens, tok)
				if keyToken != nil {
					c.tokens[tok] = true
				}
				var positions []int64
				switch typ {
				case 0: // SIMPLE
					if extra != 0 || data < 0 {
						return fail(c.fail(e, "a SIMPLE entry: no extra, a position of at least 0", ""))
					}
					positions = []int64{int64(data)}
				case 1: // FACTORED
					positions = []int64{int64(uint32(data))<<16 | int64(extra)}
				case 2: // PACKED
					positions = []int64{int64(extra), int64(data)}
				case 3: // OVERFLOW
					if data < 0 || data+extra > 8 || c.need(overflow+8*data, 8*extra, "") != nil {
						return fail(c.fail(e+12, "an overflow entry's positions within the leaf's trailer of at most 8", "start %d, %d positions", data, extra))
					}
					for k := 0; k < extra; k++ {
						positions = append(positions, c.i64(overflow+8*(data+k)))
					}
					overflowUsed = max(overflowUsed, data+extra)
				default:
					return fail(c.fail(e, "an entry type of 0 to 3 (EntryType)", "found %d", typ))
				}
				if keyToken == nil {
					continue
				}
				for _, p := range positions {
					kt, err := keyToken(p)
					if err != nil {
						return fail(c.fail(e, fmt.Sprintf("token %d's key position %d to be a partition's in Index.db", tok, p), "%v", err))
					}
					if kt != tok {
						return fail(c.fail(e+4, fmt.Sprintf("token %d: the token of the key at Index.db position %d", kt, p), "found %d", tok))
					}
				}
			}
			if multi || depth > 0 {
				if err := c.nodeEnd(nodeOff, overflow+8*overflowUsed, &end); err != nil {
					return fail(err)
				}
			} else {
				end = max(end, overflow+8*overflowUsed)
			}
		}
		level = next
	}
	if int64(len(tokens)) != count || tokens[0] != minTok || tokens[len(tokens)-1] != maxTok {
		return fail(c.fail(start+treeSharedHeader, "the root header's token count, min and max to be the leaves'",
			"header %d tokens %d..%d, leaves %d tokens %d..%d", count, minTok, maxTok, len(tokens), tokens[0], tokens[len(tokens)-1]))
	}
	return tokens, end, nil
}

// nodeEnd checks that a node of a tree of several blocks, whose content
// ends at used, is padded with zeros to its 4096-byte block's end
// (flushBuffer's alignBuffer), and moves *end past it.
func (c *checker) nodeEnd(nodeOff, used int, end *int) error {
	blockEnd := nodeOff + treeBlockBytes
	if err := c.need(nodeOff, treeBlockBytes, "a token tree node's 4096-byte block"); err != nil {
		return err
	}
	if err := c.zeros(used, blockEnd, "a token tree node's padding"); err != nil {
		return err
	}
	*end = max(*end, blockEnd)
	return nil
}

// ErrNoKey is what a KeyToken returns for a position where no Index.db
// entry starts.
var ErrNoKey = errors.New("no Index.db entry starts there")
