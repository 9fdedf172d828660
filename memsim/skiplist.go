package memsim

import (
	"math/bits"
	"math/rand/v2"

	"github.com/sstabletool/sstabletool/memsim/jvm"
)

func newLayout(cfg Config) (jvm.Layout, error) {
	jdk, ver := cfg.JDK, cfg.Cassandra
	if jdk == 0 {
		jdk = 11
	}
	if ver == "" {
		ver = "4.1"
	}
	return jvm.NewLayout(jdk, ver)
}

const maxLevel = 32

// slNode is one skip list entry. Upper-level links live in a separate
// pool so that the three quarters of nodes without an index tower (as in
// ConcurrentSkipListMap) pay nothing for them.
type slNode struct {
	tok   uint64 // cached so comparisons rarely touch the partition
	id    uint32 // partition id
	next  uint32 // level-0 successor
	up    uint32 // first of (level-1) upper links in skipList.links
	level uint8
}

// skipList is an ordered map of partitions shaped like Java's
// ConcurrentSkipListMap: every node is on the base list and gets an index
// tower with probability 1/4, of geometric(1/2) height. It has one writer;
// the replay reads from the same goroutine.
type skipList struct {
	st    *store
	nodes pool[slNode]
	links pool[uint32]
	head  [maxLevel]uint32 // successor of the head at each level (0 = none)
	level int
	rng   *rand.Rand
	preds [maxLevel]uint32 // scratch: predecessor at each level (0 = head)
}

func newSkipList(st *store) *skipList {
	s := &skipList{st: st, rng: rand.New(rand.NewPCG(1, 2))}
	s.nodes.alloc(1) // node 0 stands for the head
	s.links.alloc(1)
	return s
}

func (s *skipList) nextAt(n uint32, lvl int) uint32 {
	if n == 0 {
		return s.head[lvl]
	}
	nd := s.nodes.at(n)
	if lvl == 0 {
		return nd.next
	}
	return *s.links.at(nd.up + uint32(lvl-1))
}

func (s *skipList) setNext(n uint32, lvl int, v uint32) {
	if n == 0 {
		s.head[lvl] = v
		return
	}
	nd := s.nodes.at(n)
	if lvl == 0 {
		nd.next = v
		return
	}
	*s.links.at(nd.up + uint32(lvl-1)) = v
}

// cmp orders node n against (tok, key).
func (s *skipList) cmp(n uint32, tok uint64, key []byte) int {
	nd := s.nodes.at(n)
	if nd.tok != tok {
		if nd.tok < tok {
			return -1
		}
		return 1
	}
	return cmpKey(nd.tok, s.st.key(nd.id), tok, key)
}

// find fills preds and returns the node equal to (tok, key), or 0.
func (s *skipList) find(tok uint64, key []byte) uint32 {
	x := uint32(0)
	for lvl := s.level; lvl >= 0; lvl-- {
		for {
			nx := s.nextAt(x, lvl)
			if nx == 0 {
				break
			}
			c := s.cmp(nx, tok, key)
			if c == 0 {
				s.preds[lvl] = x
				for l := lvl - 1; l >= 0; l-- {
					s.preds[l] = 0 // not needed on a hit
				}
				return nx
			}
			if c > 0 {
				break
			}
			x = nx
		}
		s.preds[lvl] = x
	}
	return 0
}

func (s *skipList) randomLevel() int {
	r := s.rng.Uint64()
	if r&3 != 0 {
		return 0 // three quarters of nodes have no index
	}
	lvl := 1 + bits.TrailingZeros64(^(r >> 2)) // geometric(1/2)
	return min(lvl, maxLevel-1)
}

func (s *skipList) upsert(tok uint64, key []byte, create func() uint32) (uint32, bool) {
	if n := s.find(tok, key); n != 0 {
		return s.nodes.at(n).id, false
	}
	lvl := s.randomLevel()
	if lvl > s.level {
		lvl = s.level + 1 // grow one level at a time, as the Java map does
		if lvl >= maxLevel {
			lvl = maxLevel - 1
		}
		for l := s.level + 1; l <= lvl; l++ {
			s.preds[l] = 0
		}
		s.level = lvl
	}
	id := create()
	n := s.nodes.alloc(1)
	nd := s.nodes.at(n)
	*nd = slNode{tok: tok, id: id, level: uint8(lvl)}
	if lvl > 0 {
		nd.up = s.links.alloc(lvl)
	}
	for l := 0; l <= lvl; l++ {
		s.setNext(n, l, s.nextAt(s.preds[l], l))
		s.setNext(s.preds[l], l, n)
	}
	return id, true
}

func (s *skipList) get(tok uint64, key []byte) (uint32, bool) {
	if n := s.find(tok, key); n != 0 {
		return s.nodes.at(n).id, true
	}
	return 0, false
}

func (s *skipList) goBytes() int64 {
	return s.nodes.bytes(int64(24)) + s.links.bytes(4)
}
