package trie

import "fmt"

// serialNode is what the node encoder needs to know about a node being
// written (SerializationNode).
type serialNode interface {
	childCount() int
	transition(i int) int
	hasPayload() bool
	// childDelta is the child's position minus nodePos (negative: children
	// come first).
	childDelta(i int, nodePos int64) int64
	// maxDelta is the most negative childDelta the node must be able to
	// store, estimated for children not yet placed.
	maxDelta(nodePos int64) int64
}

// Per pointer-width index, the type for one child, for a child list and
// for a child range (TrieNode.Types.singles/sparses/denses). Where no type
// of the exact width exists, a wider or more general one stands in.
var (
	singles = [...]NodeType{SingleNoPayload4, Single8, SingleNoPayload12, Single16, Dense24, Dense32, Dense40, DenseLong}
	sparses = [...]NodeType{Sparse8, Sparse8, Sparse12, Sparse16, Sparse24, Sparse40, Sparse40, DenseLong}
	denses  = [...]NodeType{Dense12, Dense12, Dense12, Dense16, Dense24, Dense32, Dense40, DenseLong}
)

// fits reports whether a pointer back by dist can be stored in type t.
func fits(t NodeType, dist int64) bool {
	bits := t.PointerBits()
	if bits >= 64 {
		return true
	}
	return dist >= 0 && dist < int64(1)<<bits
}

// typeFor picks the node type Cassandra would write (TrieNode.typeFor):
// the narrowest pointer width that reaches the furthest child, a payload
// forcing a single-child node out of the payload-less types, and between
// sparse and dense the smaller (dense on a tie).
func typeFor(n serialNode, nodePos int64) NodeType {
	c := n.childCount()
	if c == 0 {
		return PayloadOnly
	}
	dist := -n.maxDelta(nodePos)
	idx := 0
	for !fits(singles[idx], dist) {
		idx++
	}
	if c == 1 {
		if n.hasPayload() && !singles[idx].CanHavePayload() {
			idx++
		}
		return singles[idx]
	}
	sp, de := sparses[idx], denses[idx]
	if nodeSize(sp, n) < nodeSize(de, n) {
		return sp
	}
	return de
}

// nodeSize is the bytes type t takes for node n, without the payload.
func nodeSize(t NodeType, n serialNode) int {
	info := &typeInfos[t]
	switch info.shape {
	case shapePayloadOnly:
		return 1
	case shapeSingle:
		switch t {
		case SingleNoPayload4:
			return 2
		case SingleNoPayload12:
			return 3
		}
		return 2 + info.pointerBits/8
	case shapeSparse:
		return 2 + n.childCount() + pointerAreaSize(info.pointerBits, n.childCount())
	}
	span := n.transition(n.childCount()-1) - n.transition(0) + 1
	return 3 + pointerAreaSize(info.pointerBits, span)
}

// appendNode encodes node n of type t at nodePos with the given payload bits.
func appendNode(dst []byte, t NodeType, n serialNode, flags uint8, nodePos int64) ([]byte, error) {
	info := &typeInfos[t]
	ptr := func(i int) (uint64, error) {
		d := -n.childDelta(i, nodePos)
		if !fits(t, d) || d <= 0 {
			return 0, fmt.Errorf("trie: child %d of %s node at %d is %d bytes back, which the type cannot store", i, t, nodePos, d)
		}
		return uint64(d), nil
	}
	if info.noPayload && flags != 0 {
		return nil, fmt.Errorf("trie: %s node at %d cannot carry a payload", t, nodePos)
	}
	switch info.shape {
	case shapePayloadOnly:
		return append(dst, byte(t)<<4|flags&0x0F), nil
	case shapeSingle:
		p, err := ptr(0)
		if err != nil {
			return nil, err
		}
		switch t {
		case SingleNoPayload4:
			return append(dst, byte(t)<<4|byte(p), byte(n.transition(0))), nil
		case SingleNoPayload12:
			return append(dst, byte(t)<<4|byte(p>>8)&0x0F, byte(p), byte(n.transition(0))), nil
		}
		dst = append(dst, byte(t)<<4|flags&0x0F, byte(n.transition(0)))
		return appendPointer(dst, p, info.pointerBits), nil
	case shapeSparse:
		c := n.childCount()
		if c > 255 {
			return nil, fmt.Errorf("trie: %s node at %d with %d children", t, nodePos, c)
		}
		dst = append(dst, byte(t)<<4|flags&0x0F, byte(c))
		for i := 0; i < c; i++ {
			dst = append(dst, byte(n.transition(i)))
		}
		if info.pointerBits == 12 {
			var carry byte
			for i := 0; i < c; i++ {
				p, err := ptr(i)
				if err != nil {
					return nil, err
				}
				dst, carry = append12(dst, p, i, carry)
			}
			if c&1 == 1 {
				dst = append(dst, carry)
			}
			return dst, nil
		}
		for i := 0; i < c; i++ {
			p, err := ptr(i)
			if err != nil {
				return nil, err
			}
			dst = appendPointer(dst, p, info.pointerBits)
		}
		return dst, nil
	}
	c := n.childCount()
	l, r := n.transition(0), n.transition(c-1)
	dst = append(dst, byte(t)<<4|flags&0x0F, byte(l), byte(r-l))
	var carry byte
	slot := 0
	put := func(p uint64) {
		if info.pointerBits == 12 {
			dst, carry = append12(dst, p, slot, carry)
		} else {
			dst = appendPointer(dst, p, info.pointerBits)
		}
		slot++
	}
	for i := 0; i < c; i++ {
		for l+slot < n.transition(i) {
			put(0) // an empty slot
		}
		p, err := ptr(i)
		if err != nil {
			return nil, err
		}
		put(p)
	}
	if info.pointerBits == 12 && slot&1 == 1 {
		dst = append(dst, carry)
	}
	return dst, nil
}

// append12 packs 12-bit pointer number i: even ones start a byte and leave
// their low nibble in carry, odd ones complete it (TrieNode.write12Bits).
func append12(dst []byte, p uint64, i int, carry byte) ([]byte, byte) {
	if i&1 == 0 {
		return append(dst, byte(p>>4)), byte(p << 4)
	}
	return append(dst, carry|byte(p>>8)&0x0F, byte(p)), 0
}

func appendPointer(dst []byte, p uint64, bits int) []byte {
	for s := bits - 8; s >= 0; s -= 8 {
		dst = append(dst, byte(p>>uint(s)))
	}
	return dst
}
