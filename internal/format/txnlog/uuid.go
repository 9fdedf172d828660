package txnlog

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sync"
	"time"
)

// UUID is a version 1 (time-based) UUID, what Cassandra's TimeUUID is: a
// log's id (TimeUUID.fromString asserts the version) and, in base 36, an
// sstable's id when uuid_sstable_identifiers_enabled (UUIDBasedSSTableId).
type UUID struct{ MSB, LSB uint64 }

// uuidEpoch is 1582-10-15, the epoch of a time UUID's 100 ns ticks, in
// Unix milliseconds (TimeUUID.UUID_EPOCH_UNIX_MILLIS).
const uuidEpoch = -12219292800000

var (
	uuidMu   sync.Mutex
	lastTick int64
	node     uint64
)

// NewTimeUUID returns a time UUID for now, strictly after any this
// process made before, with a random clock sequence and node chosen once
// per process (as TimeUUID.Generator picks one per host).
func NewTimeUUID() UUID {
	uuidMu.Lock()
	defer uuidMu.Unlock()
	if node == 0 {
		var b [8]byte
		rand.Read(b[:])
		// Variant 2 (10xx) in the top bits, then clock sequence and node.
		node = binary.BigEndian.Uint64(b[:])&0x3fffffffffffffff | 0x8000000000000000
	}
	tick := time.Now().UnixNano()/100 - uuidEpoch*10000
	if tick <= lastTick {
		tick = lastTick + 1
	}
	lastTick = tick
	return FromTick(tick, node)
}

// FromTick builds the UUID of a timestamp (100 ns since 1582-10-15) and a
// clock-sequence-and-node half.
func FromTick(tick int64, lsb uint64) UUID {
	t := uint64(tick)
	msb := (t&0xffffffff)<<32 | (t>>32&0xffff)<<16 | 0x1000 | (t >> 48 & 0x0fff)
	return UUID{MSB: msb, LSB: lsb}
}

// Tick is the timestamp in 100 ns units since 1582-10-15.
func (u UUID) Tick() int64 {
	m := u.MSB &^ 0xf000
	return int64((m&0xffff)<<48 | (m&0xffff0000)<<16 | m>>32)
}

// Version is the UUID's version nibble (1 for time UUIDs).
func (u UUID) Version() int { return int(u.MSB >> 12 & 0xf) }

// String is the canonical lower-case form Java's UUID.toString writes.
func (u UUID) String() string {
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", u.MSB>>32, u.MSB>>16&0xffff, u.MSB&0xffff, u.LSB>>48, u.LSB&0xffffffffffff)
}

// ParseUUID parses the canonical form.
func ParseUUID(s string) (UUID, error) {
	var a, b, c, d, e uint64
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return UUID{}, fmt.Errorf("%q is not a UUID", s)
	}
	if _, err := fmt.Sscanf(s, "%08x-%04x-%04x-%04x-%012x", &a, &b, &c, &d, &e); err != nil {
		return UUID{}, fmt.Errorf("%q is not a UUID: %v", s, err)
	}
	return UUID{MSB: a<<32 | b<<16 | c, LSB: d<<48 | e}, nil
}
