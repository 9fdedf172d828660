package trie

import (
	"errors"
	"fmt"
	"sort"
)

// PayloadCodec tells the writer how an index stores its payloads: each
// node's payload follows the node, and four bits in the node's type byte
// describe it.
type PayloadCodec[P any] interface {
	// Size is the payload's size in bytes.
	Size(p P) int
	// Flags are the payload bits for the node's type byte; never 0.
	Flags(p P) uint8
	// Append appends the payload's bytes.
	Append(dst []byte, p P) []byte
}

// Writer builds a trie from keys added in increasing order and writes it
// to an Output bottom-up, packing branches into pages exactly as
// Cassandra's IncrementalTrieWriterPageAware (and its deep variant, which
// produces the same bytes) does, so that the output is byte-identical.
//
// A completed node is kept in memory until its branch outgrows a page;
// then its children's branches are laid out, biggest first, each within
// one page, and the node is sized as if its children were leaves.
type Writer[P any] struct {
	out   *Output
	codec PayloadCodec[P]
	stack []*wnode[P]
	prev  []byte
	count int64
	root  int64 // -1 until Complete
	buf   []byte
}

// wnode is a node under construction (IncrementalTrieWriterPageAware.Node).
type wnode[P any] struct {
	trans    int // the transition byte leading to the node
	children []*wnode[P]
	payload  P
	hasPay   bool
	filePos  int64 // -1 until written

	// branchSize is the size of the unwritten branch below the node and
	// nodeSize the node's own size, both estimates while a flag is set.
	branchSize, nodeSize int
	// outOfPageInBranch: a node below the children was already written.
	outOfPageInBranch bool
	// outOfPageChildren: a child was already written. True until the node
	// is completed, so that sizing treats it as having far children.
	outOfPageChildren bool
}

func newNode[P any](transition int) *wnode[P] {
	return &wnode[P]{trans: transition, filePos: -1, branchSize: -1, nodeSize: -1, outOfPageChildren: true}
}

func (n *wnode[P]) childCount() int  { return len(n.children) }
func (n *wnode[P]) hasPayload() bool { return n.hasPay }

// writing adapts a node for the encoder.
type writing[P any] struct{ *wnode[P] }

func (n writing[P]) transition(i int) int { return n.children[i].trans }

func (n writing[P]) childDelta(i int, nodePos int64) int64 {
	return n.children[i].filePos - nodePos
}

// maxDelta estimates how far back the furthest child will be: already
// placed children are where they are; the first unplaced one will sit just
// after its own branch, at the start of this node's branch.
func (n writing[P]) maxDelta(nodePos int64) int64 {
	if !n.outOfPageChildren {
		return -int64(n.branchSize - n.children[0].branchSize)
	}
	minPlaced, minUnplaced := int64(0), int64(1)
	for _, c := range n.children {
		if c.filePos != -1 {
			if d := c.filePos - nodePos; d < minPlaced {
				minPlaced = d
			}
		} else if minUnplaced > 0 {
			minUnplaced = -int64(n.branchSize - c.branchSize)
		}
	}
	return min(minPlaced, minUnplaced)
}

// NewWriter starts a trie at out's current position.
func NewWriter[P any](out *Output, codec PayloadCodec[P]) *Writer[P] {
	w := &Writer[P]{out: out, codec: codec}
	w.Reset()
	return w
}

// Reset starts a new trie at the output's current position (RowIndexWriter
// writes one per partition).
func (w *Writer[P]) Reset() {
	w.stack = append(w.stack[:0], newNode[P](0))
	w.prev = w.prev[:0]
	w.count = 0
	w.root = -1
}

// Count is the number of keys added.
func (w *Writer[P]) Count() int64 { return w.count }

// ErrOrder is returned for a key not greater than the one before it.
var ErrOrder = errors.New("trie: keys must be added in strictly increasing order")

// Add adds key with its payload. Keys must increase strictly; a key may
// be a prefix of a later one (its payload then sits on an inner node).
func (w *Writer[P]) Add(key []byte, p P) error {
	if w.root >= 0 {
		return errors.New("trie: Add after Complete")
	}
	common := 0
	if w.count > 0 {
		for common < len(w.prev) && common < len(key) && w.prev[common] == key[common] {
			common++
		}
		if common == len(key) || (common < len(w.prev) && key[common] < w.prev[common]) {
			return fmt.Errorf("%w: %x after %x", ErrOrder, key, w.prev)
		}
	}
	w.count++
	for len(w.stack) > common+1 {
		if err := w.completeLast(); err != nil {
			return err
		}
	}
	n := w.stack[len(w.stack)-1]
	for _, b := range key[common:] {
		c := newNode[P](int(b))
		n.children = append(n.children, c)
		w.stack = append(w.stack, c)
		n = c
	}
	n.payload, n.hasPay = p, true
	w.prev = append(w.prev[:0], key...)
	return nil
}

func (w *Writer[P]) completeLast() error {
	n := w.stack[len(w.stack)-1]
	w.stack = w.stack[:len(w.stack)-1]
	return w.complete(n)
}

// sizeOf is the node's size with its payload at nodePos.
func (w *Writer[P]) sizeOf(n *wnode[P], nodePos int64) int {
	s := nodeSize(typeFor(writing[P]{n}, nodePos), writing[P]{n})
	if n.hasPay {
		s += w.codec.Size(n.payload)
	}
	return s
}

// complete sizes a node whose children are all known; when it and its
// branch no longer fit in a page, its children are written out.
func (w *Writer[P]) complete(n *wnode[P]) error {
	branch := 0
	for _, c := range n.children {
		branch += c.branchSize + c.nodeSize
	}
	n.branchSize = branch
	size := w.sizeOf(n, w.out.Pos())
	if size+branch < PageSize {
		n.nodeSize = size
		n.outOfPageChildren = false
		n.outOfPageInBranch = false
		for _, c := range n.children {
			if c.filePos != -1 {
				n.outOfPageChildren = true
			} else if c.outOfPageChildren || c.outOfPageInBranch {
				n.outOfPageInBranch = true
			}
		}
		return nil
	}
	return w.layoutChildren(n)
}

// layoutChildren writes the unwritten children's branches, each within a
// page: the biggest that fits in what is left of the current page first,
// padding to a new page when none fits.
func (w *Writer[P]) layoutChildren(n *wnode[P]) error {
	var set []*wnode[P] // unwritten children sorted by (branch+node size, transition)
	for _, c := range n.children {
		if c.filePos == -1 {
			set = insertBySize(set, c)
		}
	}
	left := w.out.BytesLeftInPage()
	for len(set) > 0 {
		// The biggest child whose size is <= left; ties go to the
		// higher transition byte (the most recently added).
		i := sort.Search(len(set), func(i int) bool { return set[i].branchSize+set[i].nodeSize > left }) - 1
		var c *wnode[P]
		if i < 0 {
			if err := w.out.PadToPage(); err != nil {
				return err
			}
			left = PageSize
			i = len(set) - 1
		}
		c = set[i]
		set = append(set[:i], set[i+1:]...)
		if c.outOfPageChildren || c.outOfPageInBranch {
			// Its size depends on where it goes: recompute it here.
			if actual := w.recalcTotalSize(c, w.out.Pos()); actual > left {
				if left == PageSize {
					// Does not fit even a whole page: lay out its children.
					if err := w.layoutChildren(c); err != nil {
						return err
					}
					left = w.out.BytesLeftInPage()
				}
				set = insertBySize(set, c)
				continue
			}
		}
		pos, err := w.write(c)
		if err != nil {
			return err
		}
		c.finalize(pos)
		left = w.out.BytesLeftInPage()
	}
	n.branchSize = 0
	n.outOfPageChildren = true
	n.outOfPageInBranch = false
	n.nodeSize = w.sizeOf(n, w.out.Pos())
	return nil
}

func insertBySize[P any](set []*wnode[P], c *wnode[P]) []*wnode[P] {
	size := c.branchSize + c.nodeSize
	i := sort.Search(len(set), func(i int) bool {
		s := set[i].branchSize + set[i].nodeSize
		return s > size || (s == size && set[i].trans > c.trans)
	})
	set = append(set, nil)
	copy(set[i+1:], set[i:])
	set[i] = c
	return set
}

// finalize marks a node written at pos and drops what it held.
func (n *wnode[P]) finalize(pos int64) {
	n.filePos = pos
	n.branchSize, n.nodeSize = 0, 0
	n.outOfPageInBranch, n.outOfPageChildren = false, false
	n.children = nil
	var zero P
	n.payload = zero
}

// recalcTotalSize recomputes the sizes of a branch that would start at
// pos, where they depend on how far away already written nodes are.
func (w *Writer[P]) recalcTotalSize(n *wnode[P], pos int64) int {
	if n.outOfPageInBranch {
		sz := 0
		for _, c := range n.children {
			sz += w.recalcTotalSize(c, pos+int64(sz))
		}
		n.branchSize = sz
	}
	if n.outOfPageChildren || n.outOfPageInBranch {
		n.nodeSize = w.sizeOf(n, pos+int64(n.branchSize))
	}
	return n.branchSize + n.nodeSize
}

// write writes a node's unwritten branch, then the node, and returns the
// node's position.
func (w *Writer[P]) write(n *wnode[P]) (int64, error) {
	start := w.out.Pos()
	for _, c := range n.children {
		if c.filePos == -1 {
			pos, err := w.write(c)
			if err != nil {
				return -1, err
			}
			c.filePos = pos
		}
	}
	pos := start + int64(n.branchSize)
	if w.out.Pos() != pos {
		return -1, fmt.Errorf("trie: node expected at %d after its branch, output is at %d", pos, w.out.Pos())
	}
	t := typeFor(writing[P]{n}, pos)
	var flags uint8
	if n.hasPay {
		flags = w.codec.Flags(n.payload)
	}
	var err error
	w.buf, err = appendNode(w.buf[:0], t, writing[P]{n}, flags, pos)
	if err != nil {
		return -1, err
	}
	if n.hasPay {
		w.buf = w.codec.Append(w.buf, n.payload)
	}
	// Cassandra tolerates a size other than estimated only when the node
	// then ends on a page boundary (IncrementalTrieWriterPageAware.write).
	if len(w.buf) != n.nodeSize && (pos+int64(len(w.buf)))&(PageSize-1) != 0 {
		return -1, fmt.Errorf("trie: %s node at %d is %d bytes, sized as %d", t, pos, len(w.buf), n.nodeSize)
	}
	if _, err := w.out.Write(w.buf); err != nil {
		return -1, err
	}
	return pos, nil
}

// Complete writes what is left of the trie and returns its root position.
// Like Cassandra, it puts the root branch in the current page if it fits,
// else pads to a new page, else lays out the root's children first.
func (w *Writer[P]) Complete() (int64, error) {
	if w.root >= 0 {
		return w.root, nil
	}
	var root *wnode[P]
	for len(w.stack) > 0 {
		root = w.stack[len(w.stack)-1]
		if err := w.completeLast(); err != nil {
			return -1, err
		}
	}
	w.stack = append(w.stack, root)
	actual := w.recalcTotalSize(root, w.out.Pos())
	left := w.out.BytesLeftInPage()
	if actual > left {
		if actual <= PageSize {
			if err := w.out.PadToPage(); err != nil {
				return -1, err
			}
			left = PageSize
			actual = w.recalcTotalSize(root, w.out.Pos())
		}
		if actual > left {
			if err := w.layoutChildren(root); err != nil {
				return -1, err
			}
			if root.nodeSize > w.out.BytesLeftInPage() {
				if err := w.out.PadToPage(); err != nil {
					return -1, err
				}
				w.recalcTotalSize(root, w.out.Pos())
			}
		}
	}
	pos, err := w.write(root)
	if err != nil {
		return -1, err
	}
	root.finalize(pos)
	w.root = pos
	return pos, nil
}
