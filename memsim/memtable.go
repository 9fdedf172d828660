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

// lane is one memtable kind inside a Memtable: its partition map and the
// bytes that depend on the kind (per-partition map entry, key and token
// objects, trie nodes, hash index). Rows, cells and their accounting are
// the same for every kind and live once, in the Memtable's store.
type lane struct {
	kind     Kind
	idx      index
	sl       *skipList
	trie     *shardedTrie
	ho       *hashOrdered
	own      Account
	overhead [numAllocTypes]int64 // per new partition, on heap
	hoJava   int64                // hash-ordered structure bytes charged so far
	nanos    int64                // time spent in the partition map by ApplyBatch

	// Per op of the batch being applied: whether the op created its
	// partition and the structure bytes it added (trie buffers, trie or
	// hash-index heap), charged when the op itself is applied so that the
	// accounting after each op is that of applying the ops one by one.
	created     [batchMax]bool
	dBuf, dHeap [batchMax]int64
	preds       [batchMax][maxLevel]uint32 // skip-list batch searches
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

	curKey  []byte
	fixedID uint32
	// create and give are made once: a method value per call would allocate.
	createFn func() uint32 // first lane: makes the partition
	giveFn   func() uint32 // other lanes: the id the first lane made

	batchToks [batchMax]uint64
	batchKeys [batchMax][]byte
	batchIDs  [batchMax]uint32
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
	m.createFn = m.create
	m.giveFn = func() uint32 { return m.fixedID }
	for _, k := range kinds {
		if m.lane(k) != nil {
			return nil, fmt.Errorf("memtable %s given twice", k)
		}
		ln := &lane{kind: k, own: Account{L: l}}
		switch k {
		case SkipList:
			ln.sl = newSkipList(m.st)
			ln.idx = ln.sl
			for _, t := range AllocTypes {
				ln.overhead[t] = RowOverhead(&l, t, SkipListEntry(&l))
			}
		case HashOrdered:
			ln.ho = newHashOrdered(m.st, cfg.Partitioner, &l)
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

// MapSeconds is the time ApplyBatch spent in kind k's partition map.
func (m *Memtable) MapSeconds(k Kind) float64 {
	if ln := m.lane(k); ln != nil {
		return float64(ln.nanos) / 1e9
	}
	return 0
}

func (m *Memtable) create() uint32 {
	id := m.st.newPartition(m.curKey)
	m.partitions++
	return id
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

// upsert runs op i of a batch through the lane's map. create makes the
// partition (first lane) or returns the id the first lane made.
func (ln *lane) upsert(i int, tok uint64, key []byte, create func() uint32) (uint32, error) {
	var id uint32
	var created bool
	ln.dBuf[i], ln.dHeap[i] = 0, 0
	switch {
	case ln.trie != nil:
		if err := ln.trie.checkRoom(tok); err != nil {
			return 0, err
		}
		id, created = ln.trie.upsert(tok, key, create)
		ln.dBuf[i], ln.dHeap[i] = ln.trie.lastBuf, ln.trie.lastHeap
	case ln.ho != nil:
		id, created = ln.ho.upsert(tok, key, create)
		if created {
			j := ln.ho.javaBytes()
			ln.dHeap[i] = j - ln.hoJava
			ln.hoJava = j
		}
	default:
		id, created = ln.sl.upsert(tok, key, create)
	}
	ln.created[i] = created
	return id, nil
}

// charge accounts what op i of the batch added to this kind.
func (ln *lane) charge(i int, m *Memtable, keyLen int) {
	a := &ln.own
	if ln.created[i] {
		a.perType(ln.overhead)
		if ln.kind != Trie {
			a.heap(TokenHeap(&a.L, m.part, int64(keyLen)))
			a.partitionKey(int64(keyLen))
			a.Live += 8 // SkipListMemtable.put: initialSize
		}
	}
	if ln.dBuf[i] != 0 || ln.dHeap[i] != 0 {
		if ln.trie != nil {
			a.trieBytes(ln.dBuf[i], ln.dHeap[i])
		} else {
			a.heap(ln.dHeap[i])
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
	m.curKey = op.Key
	id, err := m.lanes[0].upsert(0, tok, op.Key, m.createFn)
	if err != nil {
		return err
	}
	m.fixedID = id
	for _, ln := range m.lanes[1:] {
		got, err := ln.upsert(0, tok, op.Key, m.giveFn)
		if err != nil {
			return err
		}
		if got != id || ln.created[0] != m.lanes[0].created[0] {
			return fmt.Errorf("internal error: %s and %s disagree on partition %x", m.lanes[0].kind, ln.kind, op.Key)
		}
	}
	return m.applyTo(0, id, op)
}

func (m *Memtable) applyTo(i int, id uint32, op *workload.Op) error {
	for _, ln := range m.lanes {
		ln.charge(i, m, len(op.Key))
	}
	m.ops++
	return m.st.apply(id, op)
}

// ApplyBatch applies ops in order, calling after(i) once op i is applied.
// Each memtable kind's map takes the whole batch in turn (timed, see
// MapSeconds); for the skip list the partition searches of the batch run
// interleaved first (see skipList.searchBatch). Then the ops are merged
// into the rows and accounted one by one: the accounting after each op is
// exactly that of applying the ops one by one. After an error the
// memtable is in an unspecified state.
func (m *Memtable) ApplyBatch(ops []workload.Op, after func(i int)) error {
	for start := 0; start < len(ops); start += batchMax {
		batch := ops[start:min(start+batchMax, len(ops))]
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
		for li, ln := range m.lanes {
			t0 := time.Now()
			create := m.createFn
			if li > 0 {
				create = m.giveFn
			}
			if ln.sl != nil && n > 1 {
				ln.sl.searchBatch(m.batchToks[:n], m.batchKeys[:n], ln.preds[:n])
			}
			for i := 0; i < n; i++ {
				m.curKey, m.fixedID = m.batchKeys[i], m.batchIDs[i]
				var id uint32
				var err error
				if ln.sl != nil && n > 1 {
					id, ln.created[i] = ln.sl.upsertHint(m.batchToks[i], m.batchKeys[i], &ln.preds[i], create)
				} else if id, err = ln.upsert(i, m.batchToks[i], m.batchKeys[i], create); err != nil {
					return fmt.Errorf("op %d: %w", start+i+1, err)
				}
				if li == 0 {
					m.batchIDs[i] = id
				} else if id != m.batchIDs[i] || ln.created[i] != m.lanes[0].created[i] {
					return fmt.Errorf("internal error: %s and %s disagree on partition %x", m.lanes[0].kind, ln.kind, m.batchKeys[i])
				}
			}
			ln.nanos += int64(time.Since(t0))
		}
		for i := range batch {
			if err := m.applyTo(i, m.batchIDs[i], &batch[i]); err != nil {
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
