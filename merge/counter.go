package merge

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format/rows"
)

// Counter cells merge by shard, as db/context/CounterContext.java does. A
// context is a header (a signed short count, then the index of each
// global or local shard, a global one stored as index + Short.MIN_VALUE)
// and shards of 32 bytes: a 16-byte counter id, an 8-byte clock and an
// 8-byte count, sorted by id. Shards with the same id merge: a global
// shard beats the others and the higher clock wins between two (the
// higher count on equal clocks); two local shards (legacy, before 2.1)
// add up; between remote shards the higher clock wins.

const (
	counterIDLen    = 16
	counterShardLen = counterIDLen + 8 + 8
	shortMin        = -32768
)

// counterState is CounterContext.ContextState: a walk over a context's
// shards that learns from the header, in order, which are global or local.
type counterState struct {
	ctx                []byte
	headerLen          int
	headerOff, bodyOff int
	isGlobal, isLocal  bool
}

func wrapCounter(ctx []byte) (counterState, error) {
	if len(ctx) < 2 {
		return counterState{}, fmt.Errorf("a counter context of at least 2 bytes, found %d", len(ctx))
	}
	n := int(int16(binary.BigEndian.Uint16(ctx)))
	if n < 0 {
		n = -n
	}
	hl := 2 + 2*n
	if hl > len(ctx) || (len(ctx)-hl)%counterShardLen != 0 {
		return counterState{}, fmt.Errorf("a counter context of a %d-byte header and 32-byte shards, found %d bytes", hl, len(ctx))
	}
	s := counterState{ctx: ctx, headerLen: hl, headerOff: 2, bodyOff: hl}
	s.update()
	return s, nil
}

func (s *counterState) update() {
	if s.headerOff >= s.headerLen {
		s.isGlobal, s.isLocal = false, false
		return
	}
	elt := int(int16(binary.BigEndian.Uint16(s.ctx[s.headerOff:])))
	i := s.index()
	s.isGlobal = elt == i+shortMin
	s.isLocal = elt == i
}

func (s *counterState) index() int         { return (s.bodyOff - s.headerLen) / counterShardLen }
func (s *counterState) hasRemaining() bool { return s.bodyOff < len(s.ctx) }
func (s *counterState) id() []byte         { return s.ctx[s.bodyOff : s.bodyOff+counterIDLen] }
func (s *counterState) clock() int64 {
	return int64(binary.BigEndian.Uint64(s.ctx[s.bodyOff+counterIDLen:]))
}
func (s *counterState) count() int64 {
	return int64(binary.BigEndian.Uint64(s.ctx[s.bodyOff+counterIDLen+8:]))
}
func (s *counterState) next() {
	s.bodyOff += counterShardLen
	if s.isGlobal || s.isLocal {
		s.headerOff += 2
	}
	s.update()
}
func (s *counterState) reset() {
	s.headerOff, s.bodyOff = 2, s.headerLen
	s.update()
}
func (s *counterState) compareID(o *counterState) int { return bytes.Compare(s.id(), o.id()) }

// relationship is CounterContext.Relationship.
type relationship int

const (
	relEqual relationship = iota
	relGreater
	relLess
	relDisjoint
)

// compareShards is CounterContext.compare of two shards with the same id.
func compareShards(l, r *counterState) relationship {
	lc, ln, rc, rn := l.clock(), l.count(), r.clock(), r.count()
	if l.isGlobal || r.isGlobal {
		if l.isGlobal && r.isGlobal {
			if lc == rc {
				return compareCounts(ln, rn)
			}
			if lc > rc {
				return relGreater
			}
			return relLess
		}
		if l.isGlobal {
			return relGreater
		}
		return relLess
	}
	if l.isLocal || r.isLocal {
		if l.isLocal && r.isLocal {
			return relDisjoint
		}
		if l.isLocal {
			return relGreater
		}
		return relLess
	}
	if lc == rc {
		return compareCounts(ln, rn)
	}
	if (lc >= 0 && rc > 0 && lc >= rc) || (lc < 0 && (rc > 0 || lc < rc)) {
		return relGreater
	}
	return relLess
}

func compareCounts(a, b int64) relationship {
	switch {
	case a > b:
		return relGreater
	case a == b:
		return relEqual
	}
	return relLess
}

// counterWriter is ContextState.allocate and writeElement: shards written
// in order, the header listing the global and local ones as they come.
type counterWriter struct {
	ctx                []byte
	headerOff, bodyOff int
	index              int
}

func (w *counterWriter) write(s *counterState) {
	w.writeShard(s.id(), s.clock(), s.count(), s.isGlobal, s.isLocal)
}

func (w *counterWriter) writeShard(id []byte, clock, count int64, global, local bool) {
	copy(w.ctx[w.bodyOff:], id)
	binary.BigEndian.PutUint64(w.ctx[w.bodyOff+counterIDLen:], uint64(clock))
	binary.BigEndian.PutUint64(w.ctx[w.bodyOff+counterIDLen+8:], uint64(count))
	switch {
	case global:
		binary.BigEndian.PutUint16(w.ctx[w.headerOff:], uint16(int16(w.index+shortMin)))
		w.headerOff += 2
	case local:
		binary.BigEndian.PutUint16(w.ctx[w.headerOff:], uint16(int16(w.index)))
		w.headerOff += 2
	}
	w.bodyOff += counterShardLen
	w.index++
}

// Which side a counter merge took: one context whole, or a new one.
const (
	tookLeft = iota
	tookRight
	tookNew
)

// mergeCounters is CounterContext.merge. It returns left or right itself
// when one holds every shard of the other at least as new (took says
// which), else a new context appended to arena.
func mergeCounters(arena, left, right []byte) (out, newArena []byte, took int, err error) {
	l, err := wrapCounter(left)
	if err != nil {
		return nil, arena, 0, err
	}
	r, err := wrapCounter(right)
	if err != nil {
		return nil, arena, 0, err
	}
	leftSuper, rightSuper := true, true
	var global, local, remote int
	tally := func(s *counterState) {
		switch {
		case s.isGlobal:
			global++
		case s.isLocal:
			local++
		default:
			remote++
		}
	}
	for l.hasRemaining() && r.hasRemaining() {
		switch c := l.compareID(&r); {
		case c == 0:
			switch compareShards(&l, &r) {
			case relGreater:
				rightSuper = false
			case relLess:
				leftSuper = false
			case relDisjoint:
				leftSuper, rightSuper = false, false
			}
			switch {
			case l.isGlobal || r.isGlobal:
				global++
			case l.isLocal || r.isLocal:
				local++
			default:
				remote++
			}
			l.next()
			r.next()
		case c > 0:
			leftSuper = false
			tally(&r)
			r.next()
		default:
			rightSuper = false
			tally(&l)
			l.next()
		}
	}
	if l.hasRemaining() {
		rightSuper = false
	} else if r.hasRemaining() {
		leftSuper = false
	}
	if leftSuper {
		return left, arena, tookLeft, nil
	}
	if rightSuper {
		return right, arena, tookRight, nil
	}
	for ; l.hasRemaining(); l.next() {
		tally(&l)
	}
	for ; r.hasRemaining(); r.next() {
		tally(&r)
	}
	l.reset()
	r.reset()
	header := 2 + 2*(global+local)
	size := header + (global+local+remote)*counterShardLen
	start := len(arena)
	arena = append(arena, make([]byte, size)...)
	w := counterWriter{ctx: arena[start : start+size : start+size], headerOff: 2, bodyOff: header}
	binary.BigEndian.PutUint16(w.ctx, uint16(int16(global+local)))
	for l.hasRemaining() && r.hasRemaining() {
		switch c := l.compareID(&r); {
		case c == 0:
			switch compareShards(&l, &r) {
			case relDisjoint: // two local shards add up
				w.writeShard(l.id(), l.clock()+r.clock(), l.count()+r.count(), false, true)
			case relGreater:
				w.write(&l)
			default:
				w.write(&r)
			}
			l.next()
			r.next()
		case c > 0:
			w.write(&r)
			r.next()
		default:
			w.write(&l)
			l.next()
		}
	}
	for ; l.hasRemaining(); l.next() {
		w.write(&l)
	}
	for ; r.hasRemaining(); r.next() {
		w.write(&r)
	}
	return w.ctx, arena, tookNew, nil
}

// resolveCounter is Cells.resolveCounter for two cells of a counter
// column of which at least one is a live counter cell: a tombstone wins
// whatever its timestamp (CASSANDRA-7346); an empty value wins over a
// full one (a value left out of a read, CASSANDRA-10657); two empty ones
// by timestamp; else the contexts merge by shard and the cell takes the
// larger timestamp. took is tookLeft or tookRight when one cell is the
// result as it is, tookNew when out (value in arena) is.
func resolveCounter(arena []byte, l, r *rows.Cell) (out rows.Cell, newArena []byte, took int, why Reason, err error) {
	lt, rt := isTombstone(l), isTombstone(r)
	if lt || rt {
		if lt {
			return *l, arena, tookLeft, CounterTombstoneWins, nil
		}
		return *r, arena, tookRight, CounterTombstoneWins, nil
	}
	le, re := len(l.Value) == 0, len(r.Value) == 0
	if le || re {
		if le != re {
			if le {
				return *l, arena, tookLeft, CounterEmptyWins, nil
			}
			return *r, arena, tookRight, CounterEmptyWins, nil
		}
		if l.Timestamp > r.Timestamp {
			return *l, arena, tookLeft, OlderTimestamp, nil
		}
		return *r, arena, tookRight, OlderTimestamp, nil
	}
	merged, arena, which, err := mergeCounters(arena, l.Value, r.Value)
	if err != nil {
		return rows.Cell{}, arena, 0, 0, err
	}
	ts := max(l.Timestamp, r.Timestamp)
	switch {
	case which == tookLeft && ts == l.Timestamp:
		return *l, arena, tookLeft, CounterShardsSuperseded, nil
	case which == tookRight && ts == r.Timestamp:
		return *r, arena, tookRight, CounterShardsSuperseded, nil
	}
	return rows.Cell{Column: l.Column, Timestamp: ts, Path: l.Path, Value: merged}, arena, tookNew, CounterMerged, nil
}

// clearLocalShards is CounterContext.clearAllLocal as every read of a
// live counter cell applies it when the context's header count is
// negative (DeserializationHelper.maybeClearCounterValue, Flag.LOCAL, as
// sstable scanners and compaction read): streaming marks a context that
// holds legacy local shards to be cleared (markLocalToBeCleared, by
// negating the count), and once read its local shards are remote ones.
// The header keeps the global shards' elements; the shards are as they
// were. A context whose header lists only global shards is returned as
// it is, negative count and all, as Java does. changed says whether out
// is a new context (appended to arena).
func clearLocalShards(arena, ctx []byte) (out, newArena []byte, changed bool) {
	if len(ctx) < 2 {
		return ctx, arena, false
	}
	n := int(int16(binary.BigEndian.Uint16(ctx)))
	if n >= 0 {
		return ctx, arena, false
	}
	n = -n
	hl := 2 + 2*n
	if hl > len(ctx) {
		return ctx, arena, false // malformed: the merge reports it
	}
	globals := 0
	for i := 0; i < n; i++ {
		if int16(binary.BigEndian.Uint16(ctx[2+2*i:])) < 0 {
			globals++
		}
	}
	if globals == n {
		return ctx, arena, false
	}
	start := len(arena)
	arena = binary.BigEndian.AppendUint16(arena, uint16(globals))
	for i := 0; i < n; i++ {
		if e := ctx[2+2*i : 4+2*i]; int16(binary.BigEndian.Uint16(e)) < 0 {
			arena = append(arena, e...)
		}
	}
	arena = append(arena, ctx[hl:]...)
	return arena[start:len(arena):len(arena)], arena, true
}

// counterError names the sstable and the row whose counter cell does not
// decode.
func counterError(file string, rowOffset int64, err error) error {
	return corrupt.New(file, "Data.db", rowOffset, "a counter context in the row here: "+err.Error(), nil)
}
