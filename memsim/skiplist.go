package memsim

import (
	"math/bits"
	"math/rand/v2"

	"github.com/sstabletool/sstabletool/memsim/internal/jvm"
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

// skipList is an ordered map of partitions shaped like Java's
// ConcurrentSkipListMap: every node is on the base list and gets an index
// tower with probability 1/4, of geometric(1/2) height. It has one writer;
// the replay reads from the same goroutine.
//
// A node is a block of words in one pool: its token, its partition id and
// level, then for each level the successor and the successor's token.
// Keeping the successor's token beside the link lets a search decide to
// descend without touching the successor, which halves the cache misses of
// a lookup (the Java map pays one per comparison).
type skipList struct {
	keys  *keyStore
	words pool[uint64]
	head  uint32 // node with maxLevel levels; its token is never compared
	level int
	rng   *rand.Rand
	preds [maxLevel]uint32
}

const (
	slTok   = 0
	slMeta  = 1 // id<<8 | level
	slLinks = 2 // then (next, nextTok) per level
)

func newSkipList(keys *keyStore) *skipList {
	s := &skipList{keys: keys, rng: rand.New(rand.NewPCG(1, 2))}
	s.words.alloc(1) // index 0 means "no node"
	s.head = s.newNode(0, 0, maxLevel-1)
	return s
}

func (s *skipList) newNode(tok uint64, id uint32, level int) uint32 {
	n := s.words.alloc(slLinks + 2*(level+1))
	w := s.words.block(n, slLinks+2*(level+1))
	w[slTok] = tok
	w[slMeta] = uint64(id)<<8 | uint64(level)
	for i := slLinks; i < len(w); i++ {
		w[i] = 0
	}
	return n
}

func (s *skipList) link(n uint32, lvl int) (next uint32, nextTok uint64) {
	// A node's words never straddle a chunk (pool.alloc), so one chunk
	// lookup serves both words.
	c := s.words.chunks[n>>chunkShift]
	o := int(n&chunkMask) + slLinks + 2*lvl
	return uint32(c[o]), c[o+1]
}

func (s *skipList) setLink(n uint32, lvl int, next uint32, nextTok uint64) {
	*s.words.at(n + slLinks + 2*uint32(lvl)) = uint64(next)
	*s.words.at(n + slLinks + 2*uint32(lvl) + 1) = nextTok
}

func (s *skipList) id(n uint32) uint32 { return uint32(*s.words.at(n + slMeta) >> 8) }

// find fills preds and returns the node equal to (tok, key), or 0.
func (s *skipList) find(tok uint64, key []byte) uint32 {
	x := s.head
	for lvl := s.level; lvl >= 0; lvl-- {
		for {
			nx, nt := s.link(x, lvl)
			if nx == 0 || nt > tok {
				break
			}
			if nt == tok {
				c := cmpKey(nt, s.keys.get(s.id(nx)), tok, key)
				if c == 0 {
					return nx
				}
				if c > 0 {
					break
				}
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
		return s.id(n), false
	}
	return s.insert(tok, create), true
}

// insert links a new node for tok after s.preds (filled by a search) and
// returns the new partition's id.
func (s *skipList) insert(tok uint64, create func() uint32) uint32 {
	lvl := s.randomLevel()
	if lvl > s.level {
		lvl = s.level + 1 // grow one level at a time, as the Java map does
		s.preds[lvl] = s.head
		s.level = lvl
	}
	id := create()
	n := s.newNode(tok, id, lvl)
	for l := 0; l <= lvl; l++ {
		nx, nt := s.link(s.preds[l], l)
		s.setLink(n, l, nx, nt)
		s.setLink(s.preds[l], l, n, tok)
	}
	return id
}

func (s *skipList) get(tok uint64, key []byte) (uint32, bool) {
	if n := s.find(tok, key); n != 0 {
		return s.id(n), true
	}
	return 0, false
}

func (s *skipList) goBytes() int64 { return s.words.bytes(8) + s.keys.bytes() }

// searchBatch finds the predecessors of several keys at every level at
// once. The searches advance in lock step, so the cache misses of
// different keys overlap instead of following each other; the result is
// the same as searching one key after the other.
func (s *skipList) searchBatch(toks []uint64, keys [][]byte, preds []hint) {
	const done = -1
	var x [batchMax]uint32
	var xt [batchMax]uint64
	var lvl [batchMax]int
	n := len(toks)
	for j := 0; j < n; j++ {
		x[j], xt[j], lvl[j] = s.head, 0, s.level
		for l := s.level + 1; l < maxLevel; l++ {
			preds[j].node[l] = s.head
		}
	}
	active := n
	for active > 0 {
		for j := 0; j < n; j++ {
			l := lvl[j]
			if l == done {
				continue
			}
			nx, nt := s.link(x[j], l)
			if nx != 0 && (nt < toks[j] || nt == toks[j] && cmpKey(nt, s.keys.get(s.id(nx)), toks[j], keys[j]) < 0) {
				x[j], xt[j] = nx, nt
				continue
			}
			preds[j].node[l], preds[j].tok[l] = x[j], xt[j]
			if l == 0 {
				lvl[j] = done
				active--
			} else {
				lvl[j] = l - 1
			}
		}
	}
}

// hint is a key's predecessor at every level, as searchBatch found it,
// with the predecessors' tokens (so that upsertHint need not load them).
type hint struct {
	node [maxLevel]uint32
	tok  [maxLevel]uint64
}

// upsertHint is upsert starting from predecessors found by searchBatch.
// Inserts made since then can only sit between a hint and the key, so a
// short walk forward at each level restores the exact predecessors.
func (s *skipList) upsertHint(tok uint64, key []byte, h *hint, create func() uint32) (uint32, bool) {
	var upTok uint64 // token of s.preds[l+1]
	for l := s.level; l >= 0; l-- {
		x, xt := h.node[l], h.tok[l]
		if l < s.level {
			// The level above may have got closer than the hint.
			if a := s.preds[l+1]; s.closer(a, upTok, x, xt) {
				x, xt = a, upTok
			}
		}
		for {
			nx, nt := s.link(x, l)
			if nx == 0 || nt > tok {
				break
			}
			if nt == tok {
				c := cmpKey(nt, s.keys.get(s.id(nx)), tok, key)
				if c == 0 {
					return s.id(nx), false
				}
				if c > 0 {
					break
				}
			}
			x, xt = nx, nt
		}
		s.preds[l] = x
		upTok = xt
	}
	return s.insert(tok, create), true
}

// closer reports whether node a (token ta) sorts after node b (token tb),
// both at most the key, i.e. whether a is the closer predecessor.
func (s *skipList) closer(a uint32, ta uint64, b uint32, tb uint64) bool {
	if a == b || a == s.head {
		return false
	}
	if b == s.head {
		return true
	}
	if ta != tb {
		return ta > tb
	}
	return cmpKey(ta, s.keys.get(s.id(a)), tb, s.keys.get(s.id(b))) > 0
}

// batchMax is the most keys searchBatch handles at once.
const batchMax = 64
