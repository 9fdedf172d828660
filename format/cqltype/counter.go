package cqltype

import (
	"encoding/binary"
	"strconv"

	"github.com/sstabletool/sstabletool/corrupt"
)

// Counter contexts (db/context/CounterContext.java): a signed 2-byte count
// of header entries (negative when local shards are to be cleared), that
// many 2-byte shard indexes, then 32-byte shards of counter id (16 bytes),
// clock (8) and count (8).
const (
	counterIDLen    = 16
	counterShardLen = counterIDLen + 8 + 8
)

// CounterShard is one shard of a counter context.
type CounterShard struct {
	ID    [16]byte // the counter id (a UUID) of the replica that owns the shard
	Clock int64    // logical clock
	Count int64    // this shard's part of the total
	// Global and Local say how the header lists the shard; a shard in
	// neither list is remote (pre-2.1 data).
	Global, Local bool
}

// CounterTotal returns the value of a counter cell: the sum of the counts
// of every shard of its context (CounterContext.total).
func CounterTotal(ctx []byte) (int64, error) {
	body, err := counterBody(ctx)
	if err != nil {
		return 0, err
	}
	var total int64
	for off := body; off < len(ctx); off += counterShardLen {
		total += int64(binary.BigEndian.Uint64(ctx[off+counterIDLen+8:]))
	}
	return total, nil
}

// CounterShards decodes every shard of a counter context. Which shards
// are global or local is read as CounterContext.ContextState reads it:
// the header's elements are taken in order, each marking the shard it
// names if that is the next one walked; an element that names another
// shard (out of order, or past the last) marks nothing, and the shards
// after it are remote. Cassandra accepts such a header, so this does too.
func CounterShards(ctx []byte) ([]CounterShard, error) {
	body, err := counterBody(ctx)
	if err != nil {
		return nil, err
	}
	shards := make([]CounterShard, (len(ctx)-body)/counterShardLen)
	header := 2 // the next header element's offset
	for i := range shards {
		off := body + i*counterShardLen
		s := &shards[i]
		copy(s.ID[:], ctx[off:])
		s.Clock = int64(binary.BigEndian.Uint64(ctx[off+counterIDLen:]))
		s.Count = int64(binary.BigEndian.Uint64(ctx[off+counterIDLen+8:]))
		if header < body {
			// Global indexes are stored as index + Short.MIN_VALUE.
			elt := int(int16(binary.BigEndian.Uint16(ctx[header:])))
			s.Global, s.Local = elt == i-32768, elt == i
			if s.Global || s.Local {
				header += 2
			}
		}
	}
	return shards, nil
}

func headerCount(ctx []byte) int {
	n := int(int16(binary.BigEndian.Uint16(ctx)))
	if n < 0 {
		n = -n
	}
	return n
}

// counterBody checks the context's layout and returns where the shards start.
func counterBody(ctx []byte) (int, error) {
	if len(ctx) < 2 {
		return 0, corrupt.New("", "", 0, "a 2-byte counter context header count, found "+strconv.Itoa(len(ctx))+" bytes", nil)
	}
	body := 2 + 2*headerCount(ctx)
	if body > len(ctx) {
		return 0, corrupt.New("", "", 0, "a counter context header of "+strconv.Itoa(body)+" bytes, found "+strconv.Itoa(len(ctx)), nil)
	}
	if (len(ctx)-body)%counterShardLen != 0 {
		return 0, corrupt.New("", "", int64(body), "counter shards of "+strconv.Itoa(counterShardLen)+" bytes each, found "+strconv.Itoa(len(ctx)-body)+" bytes", nil)
	}
	return body, nil
}

// AppendGlobalCounter appends the counter context of one global shard
// (CounterContext.createGlobal): what a counter update leaves in a memtable
// and in an sstable once CounterMutation has applied it.
func AppendGlobalCounter(dst []byte, id [counterIDLen]byte, clock, count int64) []byte {
	return AppendCounterContext(dst, []CounterShard{{ID: id, Clock: clock, Count: count, Global: true}})
}

// AppendCounterContext appends a counter context of the shards in the
// order given (CounterContext keeps them sorted by id): a header entry for
// each global or local shard (a global one as its index + Short.MIN_VALUE),
// then every shard. CounterShards reads it back.
func AppendCounterContext(dst []byte, shards []CounterShard) []byte {
	n := 0
	for _, s := range shards {
		if s.Global || s.Local {
			n++
		}
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(n))
	for i, s := range shards {
		switch {
		case s.Global:
			dst = binary.BigEndian.AppendUint16(dst, uint16(int16(i-32768)))
		case s.Local:
			dst = binary.BigEndian.AppendUint16(dst, uint16(i))
		}
	}
	for _, s := range shards {
		dst = append(dst, s.ID[:]...)
		dst = binary.BigEndian.AppendUint64(dst, uint64(s.Clock))
		dst = binary.BigEndian.AppendUint64(dst, uint64(s.Count))
	}
	return dst
}
