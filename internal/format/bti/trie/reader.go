package trie

import (
	"fmt"
	"strconv"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/reader"
)

// PageSize is the disk page the writer packs nodes into (PageAware.PAGE_SIZE).
const PageSize = 4096

// DefaultMaxDepth bounds how deep a walk may go before the trie is called
// corrupt. Real keys are far shorter: a partition key is at most 64 KiB and
// its byte-comparable form at most about twice that.
const DefaultMaxDepth = 1 << 20

// window is how many bytes the reader asks its source for at a node: the
// largest node plus room for any payload the BTI indexes store.
const window = MaxNodeSize + 64

// Source supplies the bytes of a file that holds tries.
type Source interface {
	// Size is the length of the file.
	Size() int64
	// Window returns the bytes from off on, at least n of them unless the
	// file ends first. The slice is valid until the next call.
	Window(off int64, n int) ([]byte, error)
}

// BytesSource is a Source over bytes in memory (or a memory-mapped file).
type BytesSource []byte

func (b BytesSource) Size() int64 { return int64(len(b)) }

func (b BytesSource) Window(off int64, n int) ([]byte, error) {
	if off < 0 || off > int64(len(b)) {
		return nil, fmt.Errorf("trie: window at %d outside %d bytes", off, len(b))
	}
	return b[off:], nil
}

// NewFileSource reads a component file. A memory-mapped file is used in
// place; otherwise the source reads two pages at a time, which always hold
// a whole node of a page-aware trie.
func NewFileSource(f reader.File) Source {
	if m, ok := f.(reader.Mapped); ok {
		return BytesSource(m.Bytes())
	}
	return &fileSource{f: f, size: f.Size()}
}

type fileSource struct {
	f     reader.File
	size  int64
	buf   []byte
	start int64 // file position of buf[0]
}

func (s *fileSource) Size() int64 { return s.size }

func (s *fileSource) Window(off int64, n int) ([]byte, error) {
	if off < 0 || off > s.size {
		return nil, fmt.Errorf("trie: window at %d outside %d bytes", off, s.size)
	}
	end := off + int64(n)
	if end > s.size {
		end = s.size
	}
	if s.buf != nil && off >= s.start && end <= s.start+int64(len(s.buf)) {
		return s.buf[off-s.start:], nil
	}
	start := off &^ (PageSize - 1)
	if end-start > 2*PageSize {
		start = off
	}
	size := int64(2 * PageSize)
	if end-start > size {
		size = end - start
	}
	if start+size > s.size {
		size = s.size - start
	}
	if int64(cap(s.buf)) < size {
		s.buf = make([]byte, size)
	}
	s.buf = s.buf[:size]
	if _, err := s.f.ReadAt(s.buf, start); err != nil {
		s.buf = nil
		return nil, err
	}
	s.start = start
	return s.buf[off-start:], nil
}

// Reader walks one trie in a Source: the trie whose root node is at Root.
// It is not safe for concurrent use (a file source reuses its buffer).
type Reader struct {
	src  Source
	mem  []byte // the whole source when it is in memory
	size int64
	root int64

	// File and Component name the file in errors.
	File, Component string
	// MaxDepth bounds walks (DefaultMaxDepth unless set).
	MaxDepth int
}

// NewReader returns a reader of the trie rooted at root.
func NewReader(src Source, root int64, file, component string) (*Reader, error) {
	r := &Reader{src: src, size: src.Size(), root: root, File: file, Component: component, MaxDepth: DefaultMaxDepth}
	if b, ok := src.(BytesSource); ok {
		r.mem = b
	}
	if root < 0 || root >= r.size {
		return nil, corrupt.New(file, component, -1, "a trie root inside the "+strconv.FormatInt(r.size, 10)+"-byte file, not at "+strconv.FormatInt(root, 10), nil)
	}
	return r, nil
}

// Root is the position of the root node.
func (r *Reader) Root() int64 { return r.root }

// Size is the size of the file the trie is in.
func (r *Reader) Size() int64 { return r.size }

// WithRoot returns a reader of another trie in the same file (Rows.db holds
// one trie per indexed partition).
func (r *Reader) WithRoot(root int64) (*Reader, error) {
	if root < 0 || root >= r.size {
		return nil, r.corrupt(-1, "a trie root inside the "+strconv.FormatInt(r.size, 10)+"-byte file, not at "+strconv.FormatInt(root, 10), nil)
	}
	c := *r
	c.root = root
	return &c, nil
}

func (r *Reader) corrupt(off int64, expected string, err error) error {
	return corrupt.New(r.File, r.Component, off, expected, err)
}

// own names the reader's file in a corruption error raised below it.
func (r *Reader) own(err error) error {
	return corrupt.Place(err, r.File, r.Component, 0)
}

// Node reads the node at pos.
func (r *Reader) Node(pos int64) (Node, error) {
	if pos < 0 || pos >= r.size {
		return Node{}, r.corrupt(pos, "a trie node inside the file", nil)
	}
	var b []byte
	if r.mem != nil {
		b = r.mem[pos:]
	} else {
		var err error
		if b, err = r.src.Window(pos, window); err != nil {
			return Node{}, r.corrupt(pos, "a readable trie node", err)
		}
	}
	n, err := ParseNode(b, pos)
	if err != nil {
		return Node{}, r.own(err)
	}
	return n, nil
}

// child reads the child in slot i of n; ok is false for an empty dense slot.
func (r *Reader) child(n *Node, i int) (Node, bool, error) {
	pos, ok, err := n.Child(i)
	if err != nil {
		return Node{}, false, r.own(err)
	}
	if !ok {
		return Node{}, false, nil
	}
	c, err := r.Node(pos)
	return c, err == nil, err
}

func keyByte(key []byte, d int) int {
	if d < len(key) {
		return int(key[d])
	}
	return -1
}

// Follow walks key from the root while the trie has transitions for it. It
// returns the node where the walk stopped and how many bytes of key it
// consumed (len(key) when the whole key was followed). This is Walker.follow.
func (r *Reader) Follow(key []byte) (Node, int, error) {
	n, err := r.Node(r.root)
	if err != nil {
		return Node{}, 0, err
	}
	for d := 0; ; d++ {
		i := n.Search(keyByte(key, d))
		if i < 0 {
			return n, d, nil
		}
		c, ok, err := r.child(&n, i)
		if err != nil {
			return Node{}, d, err
		}
		if !ok {
			return n, d, nil
		}
		n = c
	}
}

// Entry is one key of the trie and the node that holds its payload.
type Entry struct {
	Key  []byte
	Node Node
}

// Floor finds the entry with the greatest key that is less than or equal
// to key, comparing keys as unsigned byte strings (a prefix sorts first).
// ok is false when every key is greater. This is what RowIndexReader's
// separatorFloor computes with Walker.prefixAndNeighbours and goMax.
func (r *Reader) Floor(key []byte) (e Entry, ok bool, err error) { return r.floor(key, false) }

// Lower finds the entry with the greatest key that is strictly less than
// key: Floor without key itself. A partition lookup needs it for the
// partition before a candidate whose stored prefix turns out to belong to
// a greater key.
func (r *Reader) Lower(key []byte) (e Entry, ok bool, err error) { return r.floor(key, true) }

func (r *Reader) floor(key []byte, strict bool) (e Entry, ok bool, err error) {
	n, err := r.Node(r.root)
	if err != nil {
		return Entry{}, false, err
	}
	var (
		best      Node
		bestDepth       = -1
		lesser    int64 = -1 // root of the closest smaller branch
		lesserKey []byte
	)
	for d := 0; ; d++ {
		if d > r.MaxDepth {
			return Entry{}, false, r.corrupt(n.Pos, "a trie at most "+strconv.Itoa(r.MaxDepth)+" levels deep", nil)
		}
		if strict && d == len(key) {
			break // this node is key itself, and its children are greater
		}
		i := n.Search(keyByte(key, d))
		if i == -1 || i == 0 {
			if n.HasPayload() {
				best, bestDepth = n, d
			}
		} else {
			// Something in this node sorts below key: the closest such
			// branch beats any prefix found higher up.
			j := i - 1
			if i < 0 {
				j = -i - 2
			}
			for ; j >= 0; j-- {
				pos, ok, err := n.Child(j)
				if err != nil {
					return Entry{}, false, r.own(err)
				}
				if ok {
					lesser = pos
					lesserKey = append(append(lesserKey[:0], key[:d]...), byte(n.TransitionByte(j)))
					break
				}
			}
			bestDepth = -1
		}
		if i < 0 {
			break
		}
		c, ok, err := r.child(&n, i)
		if err != nil {
			return Entry{}, false, err
		}
		if !ok {
			break
		}
		n = c
	}
	if bestDepth >= 0 {
		return Entry{Key: append([]byte(nil), key[:bestDepth]...), Node: best}, true, nil
	}
	if lesser < 0 {
		return Entry{}, false, nil
	}
	n, k, err := r.max(lesser, lesserKey)
	if err != nil {
		return Entry{}, false, err
	}
	return Entry{Key: k, Node: n}, true, nil
}

// max descends from pos along the last transitions to the greatest entry
// of the branch (Walker.goMax); key is the branch's key so far.
func (r *Reader) max(pos int64, key []byte) (Node, []byte, error) {
	n, err := r.Node(pos)
	if err != nil {
		return Node{}, nil, err
	}
	for depth := len(key); ; depth++ {
		if depth > r.MaxDepth {
			return Node{}, nil, r.corrupt(n.Pos, "a trie at most "+strconv.Itoa(r.MaxDepth)+" levels deep", nil)
		}
		last := n.TransitionRange() - 1
		if last < 0 {
			break
		}
		c, ok, err := r.child(&n, last)
		if err != nil {
			return Node{}, nil, err
		}
		if !ok {
			break
		}
		key = append(key, byte(n.TransitionByte(last)))
		n = c
	}
	if !n.HasPayload() {
		return Node{}, nil, r.corrupt(n.Pos, "a payload at the greatest node of a branch", nil)
	}
	return n, key, nil
}

// First returns the smallest entry (Walker.goMin): ok is false for a trie
// without payloads.
func (r *Reader) First() (Entry, bool, error) {
	it := r.NewIterator()
	if !it.First() {
		return Entry{}, false, it.Err()
	}
	return Entry{Key: append([]byte(nil), it.Key()...), Node: it.Node()}, true, nil
}

// Last returns the greatest entry: ok is false for a trie without payloads.
func (r *Reader) Last() (Entry, bool, error) {
	root, err := r.Node(r.root)
	if err != nil {
		return Entry{}, false, err
	}
	if root.TransitionRange() == 0 && !root.HasPayload() {
		return Entry{}, false, nil
	}
	n, k, err := r.max(r.root, nil)
	if err != nil {
		return Entry{}, false, err
	}
	return Entry{Key: k, Node: n}, true, nil
}
