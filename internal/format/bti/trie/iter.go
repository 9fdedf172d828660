package trie

import "strconv"

// Iterator lists a trie's entries in key order (a key before its
// extensions, then children by transition byte), as ValueIterator does.
// It rebuilds each key from the transitions it follows.
//
// Work is bounded on corrupt files: every pointer leads strictly backwards,
// so there are no cycles, and an iterator that visits more nodes than the
// file has bytes (nodes shared by several parents) stops with an error.
type Iterator struct {
	r      *Reader
	stack  []frame
	key    []byte
	node   Node
	err    error
	visits int64
}

type frame struct {
	pos  int64
	next int // next child slot to visit; -1 before the node's own payload
}

// NewIterator returns an iterator positioned before the first entry.
func (r *Reader) NewIterator() *Iterator {
	return &Iterator{r: r, stack: []frame{{pos: r.root, next: -1}}}
}

// Key is the current entry's key, valid until the iterator moves.
func (it *Iterator) Key() []byte { return it.key }

// Node is the current entry's node (its payload follows it).
func (it *Iterator) Node() Node { return it.node }

// Err is the error that stopped the iteration, if any.
func (it *Iterator) Err() error { return it.err }

func (it *Iterator) reset() {
	it.stack = append(it.stack[:0], frame{pos: it.r.root, next: -1})
	it.key = it.key[:0]
	it.err = nil
	it.visits = 1
}

// First positions the iterator at the smallest entry.
func (it *Iterator) First() bool {
	it.reset()
	return it.Next()
}

// SeekGE positions the iterator at the first entry whose key is greater
// than or equal to key.
func (it *Iterator) SeekGE(key []byte) bool { return it.seek(key, false) }

// SeekPrefixGE positions the iterator at the first entry whose key is a
// prefix of key, or else at the first entry greater than key. This is the
// candidate a partition index offers for a key it stores a prefix of
// (PartitionIndex.Reader.ceiling): the caller compares the full key.
func (it *Iterator) SeekPrefixGE(key []byte) bool { return it.seek(key, true) }

func (it *Iterator) seek(key []byte, prefixes bool) bool {
	it.reset()
	for d := 0; ; d++ {
		top := &it.stack[len(it.stack)-1]
		n, err := it.load(top.pos)
		if err != nil {
			return it.fail(err)
		}
		if d == len(key) {
			// Everything from here on is >= key, the node's own payload first.
			return it.Next()
		}
		if prefixes && n.HasPayload() {
			return it.Next()
		}
		i := n.Search(int(key[d]))
		if i < 0 {
			top.next = -i - 1 // the payload and the smaller children are below key
			return it.Next()
		}
		top.next = i + 1
		c, ok, err := n.Child(i)
		if err != nil {
			return it.fail(it.r.own(err))
		}
		if !ok { // Search only returns non-empty slots
			top.next = i
			return it.Next()
		}
		if !it.push(c, byte(n.TransitionByte(i))) {
			return false
		}
	}
}

func (it *Iterator) fail(err error) bool {
	it.err = err
	it.stack = it.stack[:0]
	return false
}

func (it *Iterator) load(pos int64) (Node, error) { return it.r.Node(pos) }

func (it *Iterator) push(pos int64, b byte) bool {
	// A tree has fewer nodes than the file has bytes; reaching more means
	// nodes are shared by several parents, which could take exponential time.
	it.visits++
	if it.visits > it.r.size {
		return it.fail(it.r.corrupt(pos, "each trie node reached once (more nodes reached than bytes in the file: shared pointers)", nil))
	}
	if len(it.stack) > it.r.MaxDepth {
		return it.fail(it.r.corrupt(pos, "a trie at most "+strconv.Itoa(it.r.MaxDepth)+" levels deep", nil))
	}
	it.stack = append(it.stack, frame{pos: pos, next: -1})
	it.key = append(it.key, b)
	return true
}

// Next moves to the next entry and reports whether there is one.
func (it *Iterator) Next() bool {
	for len(it.stack) > 0 {
		top := &it.stack[len(it.stack)-1]
		n, err := it.load(top.pos)
		if err != nil {
			return it.fail(err)
		}
		if top.next < 0 {
			top.next = 0
			if n.HasPayload() {
				it.node = n
				return true
			}
		}
		pushed := false
		for top.next < n.TransitionRange() {
			i := top.next
			top.next++
			c, ok, err := n.Child(i)
			if err != nil {
				return it.fail(it.r.own(err))
			}
			if !ok {
				continue
			}
			if i > 0 && n.Type >= Sparse8 && n.Type <= Sparse40 && n.TransitionByte(i) <= n.TransitionByte(i-1) {
				return it.fail(it.r.corrupt(n.Pos+2+int64(i), "transition bytes in increasing order in a "+n.Type.String()+" node", nil))
			}
			if !it.push(c, byte(n.TransitionByte(i))) {
				return false
			}
			pushed = true
			break
		}
		if pushed {
			continue
		}
		it.stack = it.stack[:len(it.stack)-1]
		if len(it.key) > 0 {
			it.key = it.key[:len(it.key)-1]
		}
	}
	return false
}
