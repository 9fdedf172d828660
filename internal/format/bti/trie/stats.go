package trie

import "strconv"

// Stats describes a trie's shape, for `metadata` and `verify`.
type Stats struct {
	Nodes        int64               // nodes reached from the root
	ByType       [numNodeTypes]int64 // nodes per type
	Keys         int64               // nodes with a payload
	MaxDepth     int                 // longest key (transitions from the root)
	KeyBytes     int64               // total length of the keys
	NodeBytes    int64               // bytes of the nodes, payloads excluded
	PayloadBytes int64               // bytes of the payloads
	PageCrossing int64               // nodes whose bytes (with payload) span a page boundary
	Pages        int64               // distinct pages holding nodes
	MinPos       int64               // lowest node position
}

// AvgKeyLength is KeyBytes/Keys.
func (s *Stats) AvgKeyLength() float64 {
	if s.Keys == 0 {
		return 0
	}
	return float64(s.KeyBytes) / float64(s.Keys)
}

// BytesPerKey is the trie's size (nodes and payloads) per key.
func (s *Stats) BytesPerKey() float64 {
	if s.Keys == 0 {
		return 0
	}
	return float64(s.NodeBytes+s.PayloadBytes) / float64(s.Keys)
}

// Stats walks every node of the trie. payloadSize returns the size of a
// node's payload (the owner knows its layout) or an error when it is
// malformed.
func (r *Reader) Stats(payloadSize func(n *Node) (int, error)) (Stats, error) {
	type item struct {
		pos   int64
		depth int
	}
	s := Stats{MinPos: r.root}
	pages := map[int64]struct{}{}
	stack := []item{{r.root, 0}}
	pushed := int64(1)
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		s.Nodes++
		if it.depth > r.MaxDepth {
			return s, r.corrupt(it.pos, "a trie at most "+strconv.Itoa(r.MaxDepth)+" levels deep", nil)
		}
		n, err := r.Node(it.pos)
		if err != nil {
			return s, err
		}
		s.ByType[n.Type]++
		s.NodeBytes += int64(n.Size())
		size := int64(n.Size())
		if n.HasPayload() {
			ps, err := payloadSize(&n)
			if err != nil {
				return s, r.own(err)
			}
			s.Keys++
			s.KeyBytes += int64(it.depth)
			s.PayloadBytes += int64(ps)
			size += int64(ps)
		}
		if it.pos/PageSize != (it.pos+size-1)/PageSize {
			s.PageCrossing++
		}
		pages[it.pos/PageSize] = struct{}{}
		if it.pos < s.MinPos {
			s.MinPos = it.pos
		}
		if it.depth > s.MaxDepth {
			s.MaxDepth = it.depth
		}
		for i := n.TransitionRange() - 1; i >= 0; i-- {
			c, ok, err := n.Child(i)
			if err != nil {
				return s, r.own(err)
			}
			if ok {
				// A tree has fewer nodes than the file has bytes; more
				// means nodes shared by several parents.
				if pushed++; pushed > r.size {
					return s, r.corrupt(n.Pos, "each trie node reached once (more nodes reached than bytes in the file: shared pointers)", nil)
				}
				stack = append(stack, item{c, it.depth + 1})
			}
		}
	}
	s.Pages = int64(len(pages))
	return s, nil
}
