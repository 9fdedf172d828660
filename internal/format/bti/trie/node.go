package trie

import (
	"encoding/binary"
	"io"
	"strconv"

	"github.com/sstabletool/sstabletool/corrupt"
)

// errTruncated is the cause of every "node runs past the end" error.
var errTruncated = io.ErrUnexpectedEOF

// NodeType is the high nibble of a node's first byte (TrieNode.Types).
type NodeType uint8

// The sixteen node types, in the order of their on-disk code.
const (
	PayloadOnly       NodeType = iota // no children
	SingleNoPayload4                  // one child, 4-bit pointer in the type byte, no payload
	Single8                           // one child, 8-bit pointer
	SingleNoPayload12                 // one child, 12-bit pointer, no payload
	Single16                          // one child, 16-bit pointer
	Sparse8                           // child list with 8-bit pointers
	Sparse12                          // child list with 12-bit pointers
	Sparse16                          // child list with 16-bit pointers
	Sparse24                          // child list with 24-bit pointers
	Sparse40                          // child list with 40-bit pointers
	Dense12                           // child range with 12-bit pointers
	Dense16                           // child range with 16-bit pointers
	Dense24                           // child range with 24-bit pointers
	Dense32                           // child range with 32-bit pointers
	Dense40                           // child range with 40-bit pointers
	DenseLong                         // child range with 64-bit pointers
	numNodeTypes
)

var nodeTypeNames = [numNodeTypes]string{
	"PAYLOAD_ONLY", "SINGLE_NOPAYLOAD_4", "SINGLE_8", "SINGLE_NOPAYLOAD_12", "SINGLE_16",
	"SPARSE_8", "SPARSE_12", "SPARSE_16", "SPARSE_24", "SPARSE_40",
	"DENSE_12", "DENSE_16", "DENSE_24", "DENSE_32", "DENSE_40", "DENSE_LONG",
}

// String returns the name Cassandra's BtiFormat.md uses ("SPARSE_12").
func (t NodeType) String() string {
	if t < numNodeTypes {
		return nodeTypeNames[t]
	}
	return "NodeType(" + strconv.Itoa(int(t)) + ")"
}

type shape uint8

const (
	shapePayloadOnly shape = iota
	shapeSingle
	shapeSparse
	shapeDense
)

// typeInfo describes one node type: its shape and pointer width. Widths of
// 4 and 12 bits are "fractional": they pack pointers into nibbles.
type typeInfo struct {
	shape       shape
	pointerBits int  // 0 for PAYLOAD_ONLY
	noPayload   bool // SINGLE_NOPAYLOAD_4/12 use the payload nibble for pointer bits
}

var typeInfos = [numNodeTypes]typeInfo{
	PayloadOnly:       {shape: shapePayloadOnly},
	SingleNoPayload4:  {shape: shapeSingle, pointerBits: 4, noPayload: true},
	Single8:           {shape: shapeSingle, pointerBits: 8},
	SingleNoPayload12: {shape: shapeSingle, pointerBits: 12, noPayload: true},
	Single16:          {shape: shapeSingle, pointerBits: 16},
	Sparse8:           {shape: shapeSparse, pointerBits: 8},
	Sparse12:          {shape: shapeSparse, pointerBits: 12},
	Sparse16:          {shape: shapeSparse, pointerBits: 16},
	Sparse24:          {shape: shapeSparse, pointerBits: 24},
	Sparse40:          {shape: shapeSparse, pointerBits: 40},
	Dense12:           {shape: shapeDense, pointerBits: 12},
	Dense16:           {shape: shapeDense, pointerBits: 16},
	Dense24:           {shape: shapeDense, pointerBits: 24},
	Dense32:           {shape: shapeDense, pointerBits: 32},
	Dense40:           {shape: shapeDense, pointerBits: 40},
	DenseLong:         {shape: shapeDense, pointerBits: 64},
}

// PointerBits is the width of the type's child pointers (0 for PAYLOAD_ONLY).
func (t NodeType) PointerBits() int { return typeInfos[t&0xF].pointerBits }

// CanHavePayload is false for the two single-child types that use the
// payload nibble for pointer bits.
func (t NodeType) CanHavePayload() bool { return !typeInfos[t&0xF].noPayload }

// MaxNodeSize is the largest node without its payload: a DENSE_LONG node
// spanning all 256 transitions.
const MaxNodeSize = 3 + 256*8

// Node is one parsed trie node. It refers to the bytes it was parsed from
// and stays valid only as long as they do (for a Reader over a file that is
// not memory-mapped, until the Reader reads another node).
type Node struct {
	Pos   int64    // file position of the node's first byte
	Type  NodeType // high nibble of the first byte
	Flags uint8    // payload bits: 0 means no payload

	b     []byte // the node's bytes, from its first byte on
	rest  []byte // the bytes after the node that were read with it
	count int    // number of child slots (transition range)
	first int    // dense: first transition byte; single: the transition byte
	ptrs  int    // offset in b of the pointer area
	size  int    // bytes of the node itself; the payload follows
}

// ParseNode decodes the node whose first byte is b[0] and which sits at
// file position pos. It checks that the node's bytes are all present and
// that a dense node's range stays within byte values; child pointers are
// checked when they are followed (Child).
func ParseNode(b []byte, pos int64) (Node, error) {
	if len(b) == 0 {
		return Node{}, corrupt.New("", "", pos, "a trie node", errTruncated)
	}
	n := Node{Pos: pos, Type: NodeType(b[0] >> 4), Flags: b[0] & 0x0F, b: b}
	info := &typeInfos[n.Type]
	switch info.shape {
	case shapePayloadOnly:
		n.size = 1
	case shapeSingle:
		n.count = 1
		switch n.Type {
		case SingleNoPayload4:
			n.Flags = 0
			n.size = 2
		case SingleNoPayload12:
			n.Flags = 0
			n.size = 3
		default:
			n.ptrs = 2
			n.size = 2 + info.pointerBits/8
		}
	case shapeSparse:
		if len(b) < 2 {
			return Node{}, corrupt.New("", "", pos, n.Type.String()+" node header (type and child count)", errTruncated)
		}
		n.count = int(b[1])
		if n.count == 0 {
			return Node{}, corrupt.New("", "", pos+1, "a child count above 0 in a "+n.Type.String()+" node", nil)
		}
		n.ptrs = 2 + n.count
		n.size = n.ptrs + pointerAreaSize(info.pointerBits, n.count)
	case shapeDense:
		if len(b) < 3 {
			return Node{}, corrupt.New("", "", pos, n.Type.String()+" node header (type, first byte, length)", errTruncated)
		}
		n.first = int(b[1])
		n.count = int(b[2]) + 1
		if n.first+n.count > 256 {
			return Node{}, corrupt.New("", "", pos+2, "a "+n.Type.String()+" range within byte values (first "+
				strconv.Itoa(n.first)+", length "+strconv.Itoa(n.count)+")", nil)
		}
		n.ptrs = 3
		n.size = 3 + pointerAreaSize(info.pointerBits, n.count)
	}
	if len(b) < n.size {
		return Node{}, corrupt.New("", "", pos, strconv.Itoa(n.size)+" bytes of "+n.Type.String()+" node, "+
			strconv.Itoa(len(b))+" left", errTruncated)
	}
	n.b = b[:n.size:n.size]
	n.rest = b[n.size:]
	switch n.Type {
	case SingleNoPayload12:
		n.first = int(b[2])
	case SingleNoPayload4, Single8, Single16:
		n.first = int(b[1])
	}
	if n.Type == SingleNoPayload4 && n.b[0]&0x0F == 0 {
		return Node{}, corrupt.New("", "", pos, "a non-zero pointer in a SINGLE_NOPAYLOAD_4 node", nil)
	}
	return n, nil
}

// pointerAreaSize is the bytes taken by count pointers of the given width;
// 12-bit pointers pack two into three bytes, an odd last one takes two.
func pointerAreaSize(bits, count int) int {
	if bits == 12 {
		return (count*3 + 1) / 2
	}
	return count * bits / 8
}

// Size is the node's size in bytes, without its payload.
func (n *Node) Size() int { return n.size }

// PayloadPos is the file position of the payload (just after the node).
func (n *Node) PayloadPos() int64 { return n.Pos + int64(n.size) }

// Payload returns the bytes after the node that were read with it: the
// payload and whatever follows. Payload decoders must check its length.
func (n *Node) Payload() []byte { return n.rest }

// HasPayload reports whether the payload bits are non-zero.
func (n *Node) HasPayload() bool { return n.Flags != 0 }

// TransitionRange is the number of child slots: 0 for PAYLOAD_ONLY, 1 for
// singles, the child count for sparse nodes and the span for dense ones
// (where slots may be empty).
func (n *Node) TransitionRange() int { return n.count }

// TransitionByte is the byte that leads to child slot i.
func (n *Node) TransitionByte(i int) int {
	if n.Type >= Sparse8 && n.Type <= Sparse40 {
		return int(n.b[2+i])
	}
	return n.first + i
}

// delta reads the distance back to child slot i (0 is an empty dense slot).
func (n *Node) delta(i int) uint64 {
	b := n.b
	switch n.Type {
	case SingleNoPayload4:
		return uint64(b[0] & 0x0F)
	case SingleNoPayload12:
		return uint64(b[0]&0x0F)<<8 | uint64(b[1])
	case Single8, Sparse8:
		return uint64(b[n.ptrs+i])
	case Single16, Sparse16, Dense16:
		return uint64(binary.BigEndian.Uint16(b[n.ptrs+2*i:]))
	case Sparse12, Dense12:
		w := uint64(b[n.ptrs+3*i/2])<<8 | uint64(b[n.ptrs+3*i/2+1])
		if i&1 == 0 {
			w >>= 4
		}
		return w & 0xFFF
	case Sparse24, Dense24:
		o := n.ptrs + 3*i
		return uint64(b[o])<<16 | uint64(b[o+1])<<8 | uint64(b[o+2])
	case Dense32:
		return uint64(binary.BigEndian.Uint32(b[n.ptrs+4*i:]))
	case Sparse40, Dense40:
		o := n.ptrs + 5*i
		return uint64(b[o])<<32 | uint64(binary.BigEndian.Uint32(b[o+1:]))
	case DenseLong:
		return binary.BigEndian.Uint64(b[n.ptrs+8*i:])
	}
	return 0
}

// Child returns the position of the child in slot i (0 <= i <
// TransitionRange). ok is false for an empty dense slot. A pointer that
// does not lead strictly backwards to a position in the file is corrupt.
func (n *Node) Child(i int) (pos int64, ok bool, err error) {
	d := n.delta(i)
	if d == 0 {
		if n.Type >= Dense12 {
			return -1, false, nil
		}
		return -1, false, corrupt.New("", "", n.Pos, "a non-zero pointer for child "+strconv.Itoa(i)+" of "+n.Type.String()+" node", nil)
	}
	if d > uint64(n.Pos) {
		return -1, false, corrupt.New("", "", n.Pos, "child "+strconv.Itoa(i)+" of "+n.Type.String()+" node before the start of the file (pointer back "+
			strconv.FormatUint(d, 10)+" from "+strconv.FormatInt(n.Pos, 10)+")", nil)
	}
	return n.Pos - int64(d), true, nil
}

// Search finds transition byte c (or -1, the end of a key, which matches
// nothing) like Java's binarySearch: the slot index when present, else
// -(insertion point)-1, where the insertion point is the first slot whose
// byte is greater. For dense nodes an empty slot counts as absent.
func (n *Node) Search(c int) int {
	switch typeInfos[n.Type].shape {
	case shapePayloadOnly:
		return -1
	case shapeSingle:
		t := n.first
		switch {
		case c == t:
			return 0
		case c < t:
			return -1
		}
		return -2
	case shapeSparse:
		// The transition bytes are sorted; a short linear scan beats a
		// binary search for the small counts that dominate real tries.
		bs := n.b[2 : 2+n.count]
		if len(bs) > 8 {
			lo, hi := 0, len(bs)
			for lo < hi {
				m := int(uint(lo+hi) >> 1)
				if int(bs[m]) < c {
					lo = m + 1
				} else {
					hi = m
				}
			}
			if lo < len(bs) && int(bs[lo]) == c {
				return lo
			}
			return -lo - 1
		}
		for i, t := range bs {
			if int(t) >= c {
				if int(t) == c {
					return i
				}
				return -i - 1
			}
		}
		return -len(bs) - 1
	case shapeDense:
		i := c - n.first
		if i < 0 {
			return -1
		}
		if i >= n.count {
			return -n.count - 1
		}
		if n.delta(i) == 0 {
			return -i - 1
		}
		return i
	}
	return -1
}
