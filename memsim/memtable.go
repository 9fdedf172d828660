package memsim

import (
	"bytes"
	"fmt"
	"strings"
	"time"
	"unsafe"

	"github.com/sstabletool/sstabletool/workload"
)

var (
	sizeofPartition = unsafe.Sizeof(partition{})
	sizeofRow       = unsafe.Sizeof(row{})
	sizeofCell      = unsafe.Sizeof(cell{})
)

// Kind names a memtable implementation.
type Kind int

const (
	SkipList    Kind = iota // SkipListMemtable: ConcurrentSkipListMap of AtomicBTreePartition
	Trie                    // TrieMemtable: sharded InMemoryTrie of BTreePartitionData
	HashOrdered             // CASSANDRA-7282: token-ordered list with a hash index beside it
)

var kindNames = [...]string{"skiplist", "trie", "hashordered"}

func (k Kind) String() string { return kindNames[k] }

// Kinds lists every memtable kind.
var Kinds = []Kind{SkipList, Trie, HashOrdered}

// ParseKind reads a memtable name.
func ParseKind(s string) (Kind, error) {
	for i, n := range kindNames {
		if strings.EqualFold(s, n) {
			return Kind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown memtable %q (want %s)", s, strings.Join(kindNames[:], ", "))
}

// index maps partition keys to partition ids; it is what differs between
// the memtable kinds.
type index interface {
	// upsert returns the id of the partition with this key, calling create
	// to make one when absent.
	upsert(tok uint64, key []byte, create func() uint32) (id uint32, created bool)
	get(tok uint64, key []byte) (uint32, bool)
	goBytes() int64
}

// lane is one memtable kind inside a Memtable: its partition map (with
// the keys it compares) and the bytes that depend on the kind
// (per-partition map entry, key and token objects, trie nodes, hash
// index). Rows, cells and their accounting are the same for every kind
// and live once, in the Memtable's store. A lane's map touches nothing
// outside the lane, so the lanes of a replay run on goroutines of their
// own (see pipeline) and agree on partition ids by numbering partitions
// in the order they are created, which is the op order for every lane.
type lane struct {
	kind     Kind
	idx      index
	sl       *skipList
	trie     *shardedTrie
	ho       *hashOrdered
	keys     *keyStore // nil for the trie, which holds keys in its nodes
	own      Account
	overhead [numAllocTypes]int64 // per new partition, on heap
	hoJava   int64                // hash-ordered structure bytes charged so far
	nanos    int64                // time spent in the partition map by batches
	sink     uint64               // keeps touch's reads from being optimised away

	nextID   uint32
	curKey   []byte
	createFn func() uint32 // made once: a method value per call would allocate

	out   laneOut // results of Apply and ApplyBatch
	preds [batchMax]hint
}

// laneOut is what a lane's map did with each op of a batch: the partition
// id, whether the op created it, and the structure bytes the op added
// (trie buffers, trie or hash-index heap), charged when the op itself is
// applied so that the accounting after each op is that of applying the
// ops one by one.
type laneOut struct {
	ids         [pipeBatch]uint32
	created     [pipeBatch]bool
	dBuf, dHeap [pipeBatch]int64
	err         error
	errAt       int
}

// pipeBatch is the most ops a lane takes at once.
const pipeBatch = 256

func (ln *lane) create() uint32 {
	id := ln.nextID
	ln.nextID++
	if ln.keys != nil {
		ln.keys.add(id, ln.curKey)
	}
	return id
}

// Memtable is one or several Go memtables over one store of partitions,
// rows and cells, with Cassandra's accounting for every allocation type.
// Several kinds in one Memtable see the same writes: the operations are
// decoded, the rows merged and their bytes accounted once, and only the
// partition maps (and the bytes that differ by kind) are kept per kind.
type Memtable struct {
	kinds      []Kind
	part       Partitioner
	st         *store
	lanes      []*lane
	partitions int64
	ops        int64

	batchToks [pipeBatch]uint64
	batchKeys [pipeBatch][]byte
	outs      []*laneOut // each lane's out
	sum       Account
}

// Config selects what a Memtable models.
type Config struct {
	Kind Kind
	// Kinds, when set, replaces Kind: these memtables share one store.
	Kinds       []Kind
	Partitioner Partitioner
	JDK         int    // 11 or 17
	Cassandra   string // "4.1" or "5.0"
	Shards      int    // TrieMemtable shards (default 1)
}

// NewMemtable builds an empty memtable (or set of memtables sharing their
// rows, see Config.Kinds) for the given schema.
func NewMemtable(cfg Config, schema *workload.Schema) (*Memtable, error) {
	l, err := newLayout(cfg)
	if err != nil {
		return nil, err
	}
	kinds := cfg.Kinds
	if len(kinds) == 0 {
		kinds = []Kind{cfg.Kind}
	}
	m := &Memtable{kinds: kinds, part: cfg.Partitioner}
	m.st = newStore(schema, &Account{L: l})
	m.sum.L = l
	for _, k := range kinds {
		if m.lane(k) != nil {
			return nil, fmt.Errorf("memtable %s given twice", k)
		}
		ln := &lane{kind: k, own: Account{L: l}, nextID: 1}
		ln.createFn = ln.create
		switch k {
		case SkipList:
			ln.keys = newKeyStore()
			ln.sl = newSkipList(ln.keys)
			ln.idx = ln.sl
			for _, t := range AllocTypes {
				ln.overhead[t] = RowOverhead(&l, t, SkipListEntry(&l))
			}
		case HashOrdered:
			ln.keys = newKeyStore()
			ln.ho = newHashOrdered(ln.keys, cfg.Partitioner, &l)
			ln.idx = ln.ho
			for _, t := range AllocTypes {
				ln.overhead[t] = RowOverhead(&l, t, 0)
			}
			// The empty structure (one sentinel, one bucket) is part of
			// the map, as an empty trie's buffers are not charged: charge
			// only what inserts add.
			ln.hoJava = ln.ho.javaBytes()
		case Trie:
			ln.trie = newShardedTrie(cfg.Partitioner, max(cfg.Shards, 1))
			ln.idx = ln.trie
			for _, t := range AllocTypes {
				ln.overhead[t] = l.BTreePartitionData // BTreePartitionUpdater.mergePartitions of a new partition
			}
		default:
			return nil, fmt.Errorf("unknown memtable kind %d", k)
		}
		m.lanes = append(m.lanes, ln)
		m.outs = append(m.outs, &ln.out)
	}
	return m, nil
}

func (m *Memtable) lane(k Kind) *lane {
	for _, ln := range m.lanes {
		if ln.kind == k {
			return ln
		}
	}
	return nil
}

// Kind returns the memtable's kind (the first, when it holds several).
func (m *Memtable) Kind() Kind { return m.kinds[0] }

// Kinds returns the memtable kinds it holds.
func (m *Memtable) Kinds() []Kind { return m.kinds }

// Account returns the accounting so far of the (first) memtable kind.
func (m *Memtable) Account() *Account {
	m.sum = m.AccountOf(m.kinds[0])
	return &m.sum
}

// AccountOf returns the accounting so far of one memtable kind: the
// shared rows and cells plus what that kind adds.
func (m *Memtable) AccountOf(k Kind) Account {
	ln := m.lane(k)
	a := *m.st.acct
	if ln == nil {
		return a
	}
	for t := range a.On {
		a.On[t] += ln.own.On[t]
		a.Off[t] += ln.own.Off[t]
	}
	a.Live += ln.own.Live
	a.Cells += ln.own.Cells
	return a
}

// Partitions returns the number of partitions held.
func (m *Memtable) Partitions() int64 { return m.partitions }

// Ops returns the number of writes applied.
func (m *Memtable) Ops() int64 { return m.ops }

// GoBytes is what the Go structure of the (first) kind holds: the store
// and its partition map.
func (m *Memtable) GoBytes() int64 { return m.GoBytesOf(m.kinds[0]) }

// GoBytesOf is what one kind alone would hold: the store and its map.
func (m *Memtable) GoBytesOf(k Kind) int64 {
	n := m.st.goBytes()
	if ln := m.lane(k); ln != nil {
		n += ln.idx.goBytes()
	}
	return n
}

// MapSeconds is the time batches spent in kind k's partition map.
func (m *Memtable) MapSeconds(k Kind) float64 {
	if ln := m.lane(k); ln != nil {
		return float64(ln.nanos) / 1e9
	}
	return 0
}

func checkOp(op *workload.Op) error {
	if op.Kind != workload.OpWrite {
		return fmt.Errorf("Apply: op is not a write")
	}
	if len(op.Key) == 0 {
		return fmt.Errorf("Apply: empty partition key")
	}
	if len(op.Key) > 0xFFFF {
		return fmt.Errorf("Apply: partition key of %d bytes exceeds 65535", len(op.Key))
	}
	return nil
}

// upsert runs one op through the lane's map and records it as op i of out.
func (ln *lane) upsert(out *laneOut, i int, tok uint64, key []byte) error {
	var id uint32
	var created bool
	out.dBuf[i], out.dHeap[i] = 0, 0
	ln.curKey = key
	switch {
	case ln.trie != nil:
		if err := ln.trie.checkRoom(tok); err != nil {
			return err
		}
		id, created = ln.trie.upsert(tok, key, ln.createFn)
		out.dBuf[i], out.dHeap[i] = ln.trie.lastBuf, ln.trie.lastHeap
	case ln.ho != nil:
		id, created = ln.ho.upsert(tok, key, ln.createFn)
		if created {
			j := ln.ho.javaBytes()
			out.dHeap[i] = j - ln.hoJava
			ln.hoJava = j
		}
	default:
		id, created = ln.sl.upsert(tok, key, ln.createFn)
	}
	out.ids[i], out.created[i] = id, created
	return nil
}

// run puts n ops (their order tokens and keys) through the lane's map,
// timed. The skip list searches up to batchMax keys interleaved first (see
// skipList.searchBatch). It stops at the first error, recorded in out.
func (ln *lane) run(out *laneOut, toks []uint64, keys [][]byte) {
	t0 := time.Now()
	defer func() { ln.nanos += int64(time.Since(t0)) }()
	out.err = nil
	n := len(toks)
	if ln.sl == nil || n < 2 {
		// Overlap the batch's cache misses first (see touch).
		for start := 0; start < n && n > 1; start += batchMax {
			end := min(start+batchMax, n)
			switch {
			case ln.trie != nil:
				ln.sink += uint64(ln.trie.touch(toks[start:end], keys[start:end]))
			case ln.ho != nil:
				ln.sink += ln.ho.touch(toks[start:end], keys[start:end])
			}
		}
		for i := 0; i < n; i++ {
			if err := ln.upsert(out, i, toks[i], keys[i]); err != nil {
				out.err, out.errAt = err, i
				return
			}
		}
		return
	}
	for start := 0; start < n; start += batchMax {
		end := min(start+batchMax, n)
		ln.sl.searchBatch(toks[start:end], keys[start:end], ln.preds[:end-start])
		for i := start; i < end; i++ {
			ln.curKey = keys[i]
			out.ids[i], out.created[i] = ln.sl.upsertHint(toks[i], keys[i], &ln.preds[i-start], ln.createFn)
			out.dBuf[i], out.dHeap[i] = 0, 0
		}
	}
}

// charge accounts what op i of out added to this kind.
func (ln *lane) charge(out *laneOut, i int, part Partitioner, keyLen int) {
	a := &ln.own
	if out.created[i] {
		a.perType(ln.overhead)
		if ln.kind != Trie {
			a.heap(TokenHeap(&a.L, part, int64(keyLen)))
			a.partitionKey(int64(keyLen))
			a.Live += 8 // SkipListMemtable.put: initialSize
		}
	}
	if out.dBuf[i] != 0 || out.dHeap[i] != 0 {
		if ln.trie != nil {
			a.trieBytes(out.dBuf[i], out.dHeap[i])
		} else {
			a.heap(out.dHeap[i])
		}
	}
}

// Apply replays one write.
func (m *Memtable) Apply(op *workload.Op) error {
	if err := checkOp(op); err != nil {
		return err
	}
	tok := m.part.orderToken(op.Key)
	// A full trie shard refuses the write before any map holds its key.
	for _, ln := range m.lanes {
		if ln.trie != nil {
			if err := ln.trie.checkRoom(tok); err != nil {
				return err
			}
		}
	}
	for _, ln := range m.lanes {
		if err := ln.upsert(&ln.out, 0, tok, op.Key); err != nil {
			return err
		}
	}
	return m.applyTo(m.outs, 0, op)
}

// applyTo merges op i of a batch into the store, after the lanes' maps
// (outs, one per lane) have taken it, and accounts it.
func (m *Memtable) applyTo(outs []*laneOut, i int, op *workload.Op) error {
	id, created := outs[0].ids[i], outs[0].created[i]
	for k, o := range outs[1:] {
		if o.ids[i] != id || o.created[i] != created {
			return fmt.Errorf("internal error: %s and %s disagree on partition %x", m.lanes[0].kind, m.lanes[k+1].kind, op.Key)
		}
	}
	if created {
		if got := m.st.newPartition(); got != id {
			return fmt.Errorf("internal error: partition %d created as %d", id, got)
		}
		m.partitions++
	}
	for k, ln := range m.lanes {
		ln.charge(outs[k], i, m.part, len(op.Key))
	}
	m.ops++
	return m.st.apply(id, op)
}

// ApplyBatch applies ops in order, calling after(i) once op i is applied.
// Each memtable kind's map takes up to pipeBatch ops in turn (timed, see
// MapSeconds); then the ops are merged into the rows and accounted one by
// one: the accounting after each op is exactly that of applying the ops
// one by one. After an error the memtable is in an unspecified state.
func (m *Memtable) ApplyBatch(ops []workload.Op, after func(i int)) error {
	outs := m.outs
	for start := 0; start < len(ops); start += pipeBatch {
		batch := ops[start:min(start+pipeBatch, len(ops))]
		for i := range batch {
			if err := checkOp(&batch[i]); err != nil {
				// Apply the ops before the bad one, as one by one would,
				// then let Apply report it.
				for j := 0; j < i; j++ {
					if err := m.Apply(&batch[j]); err != nil {
						return err
					}
					after(start + j)
				}
				return m.Apply(&batch[i])
			}
			m.batchToks[i] = m.part.orderToken(batch[i].Key)
			m.batchKeys[i] = batch[i].Key
		}
		n := len(batch)
		for _, ln := range m.lanes {
			ln.run(&ln.out, m.batchToks[:n], m.batchKeys[:n])
			if ln.out.err != nil {
				return fmt.Errorf("op %d: %w", start+ln.out.errAt+1, ln.out.err)
			}
		}
		for i := range batch {
			if err := m.applyTo(outs, i, &batch[i]); err != nil {
				return err
			}
			after(start + i)
		}
	}
	return nil
}

// Read looks the key up in the (first) kind's map and reads the whole
// partition, returning its live row count and whether it exists.
func (m *Memtable) Read(key []byte) (rows int, found bool) {
	return m.ReadIn(m.kinds[0], key)
}

// ReadIn is Read through kind k's map.
func (m *Memtable) ReadIn(k Kind, key []byte) (rows int, found bool) {
	ln := m.lane(k)
	if ln == nil {
		return 0, false
	}
	id, ok := ln.idx.get(m.part.orderToken(key), key)
	if !ok {
		return 0, false
	}
	rows, _ = m.st.read(id)
	return rows, true
}

// cmpKey orders (token, key) pairs as DecoratedKey.compareTo does.
func cmpKey(ta uint64, ka []byte, tb uint64, kb []byte) int {
	if ta != tb {
		if ta < tb {
			return -1
		}
		return 1
	}
	return bytes.Compare(ka, kb)
}
