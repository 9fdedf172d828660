package scrub

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/format/txnlog"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/reader"
	"github.com/sstabletool/sstabletool/verify"
)

// Mode says what scrub does at a problem, as ScyllaDB's scrub modes do.
type Mode int

const (
	// Skip (the default) leaves out what cannot be read, resynchronizes at
	// the next partition the index knows, and writes the rest.
	Skip Mode = iota
	// Abort stops at the first partition that cannot be read whole, and
	// writes nothing.
	Abort
	// Validate reads and reports exactly what Skip would do, and writes
	// nothing.
	Validate
)

var modeNames = []string{"skip", "abort", "validate"}

// Modes are the modes, in the order ParseMode's error names them.
func Modes() []Mode { return []Mode{Skip, Abort, Validate} }

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode reads a mode's name.
func ParseMode(s string) (Mode, error) {
	for i, n := range modeNames {
		if s == n {
			return Mode(i), nil
		}
	}
	return Skip, fmt.Errorf("unknown scrub mode %q (skip, abort or validate)", s)
}

// Options controls a scrub.
type Options struct {
	Mode Mode
	// ReinsertOverflowedTTL keeps rows whose expiration overflowed past
	// 2038 (CASSANDRA-14092), rewritten as Cassandra 5.0's scrub
	// --reinsert-overflowed-ttl writes them; without it they are left out
	// and reported.
	ReinsertOverflowedTTL bool
	// To is the output version; the zero Version keeps the source's.
	To format.Version
	// ColumnIndexSize is column_index_size in bytes, for the promoted index
	// blocks (big) or row index blocks (BTI) rebuilt: it must be what the
	// writer had for a rebuilt Index.db or Rows.db to equal the original.
	// 0 is the target format's default (64 KiB big, 16 KiB BTI).
	ColumnIndexSize int
	// Access is how the source is read (buffered by default).
	Access reader.Access
	// Progress, when set, hears source Data.db bytes done of the total of
	// each pass.
	Progress func(done, total int64)
	// CheckSchema, when set, is called with the opened source before
	// anything is read: a schema's check (the command's --schema), which
	// may make a 3.x frozen UDT column read as frozen (FreezeColumn). Its
	// error makes the sstable unscrubbable.
	CheckSchema func(*sstable.SSTable) error
	// DropIndexComponents removes, before writing into the output
	// directory, the SAI and SASI files it holds under the output's name
	// with no Data.db (convert.Options.DropIndexComponents); without it
	// they are refused.
	DropIndexComponents bool
}

// ErrAborted is returned in Abort mode when the scrub would lose, drop,
// merge or reorder anything; the report says what.
var ErrAborted = errors.New("scrub aborted at the first problem (--mode abort)")

// Scrub repairs the sstable at srcPath (any of its components) into outDir,
// crash-safely (staged, then moved into place with Data.db last; see
// package writer), and returns what it found and did. The source is only
// read. In Validate mode outDir is not used and nothing is written.
//
// The error is for an sstable that cannot be scrubbed at all (no
// Statistics.db, a Data.db that cannot be opened, an output that does not
// verify), or ErrAborted; the report is returned with it when there is one.
func Scrub(srcPath, outDir string, o Options) (*Report, error) {
	return scrubOn(vfs.Default, srcPath, outDir, o)
}

// scrubOn is Scrub writing through fsys: the seam where tests inject
// crashes, fsync errors and a full disk.
func scrubOn(fsys vfs.FS, srcPath, outDir string, o Options) (*Report, error) {
	sc, err := open(srcPath, o)
	if err != nil {
		return nil, err
	}
	defer sc.close()
	if o.Mode == Validate {
		return sc.rep, sc.run(nil)
	}
	// The staging directory is made first: leftovers of a killed run are
	// repaired, and an output that already holds the sstable refused,
	// before anything is read.
	out := &stagedOutputs{fsys: fsys, dir: outDir, src: sc.src.Desc()}
	prefix := out.src.WithVersion(sc.to).Prefix()
	if o.DropIndexComponents {
		dropped, err := writer.DropStaleIndexFiles(fsys, outDir, prefix)
		if err != nil {
			return sc.rep, err
		}
		for _, n := range dropped {
			sc.rep.note(fmt.Sprintf("removed %s: an index file left under the output's name without its Data.db (--drop-index-components)", n))
		}
	}
	if out.st, err = writer.NewStaging(fsys, outDir, prefix); err != nil {
		return sc.rep, err
	}
	sc.rep.Recovered = out.st.Recovered()
	err = sc.run(out)
	if err == nil && len(out.made) > 0 {
		err = sc.verifyOutputs(out.made, out.st.Dir())
	}
	if err == nil && len(out.made) > 0 {
		err = out.st.Commit()
	}
	if err != nil || len(out.made) == 0 {
		out.st.Abort()
	}
	if err != nil {
		return sc.rep, err
	}
	for _, d := range out.made {
		sc.rep.Outputs = append(sc.rep.Outputs, d.Path(format.ComponentData))
	}
	return sc.rep, nil
}

// outputs creates the sstables a scrub writes: the repaired one, and the
// second one of out-of-order partitions.
type outputs interface {
	newSSTable(v format.Version, second bool) (format.Descriptor, writer.Output, error)
}

// stagedOutputs writes into one staging directory in the output directory,
// committed once: both sstables become visible, or neither.
type stagedOutputs struct {
	fsys vfs.FS
	dir  string
	src  format.Descriptor
	st   *writer.Staging
	made []format.Descriptor
}

func (o *stagedOutputs) newSSTable(v format.Version, second bool) (format.Descriptor, writer.Output, error) {
	d := o.src.WithVersion(v).WithDir(o.dir)
	if second {
		gen, err := freeGeneration(o.fsys, o.dir, o.made[0].Generation)
		if err != nil {
			return d, nil, err
		}
		d.Generation = gen
	}
	o.made = append(o.made, d)
	return d, o.st.Output(), nil
}

// freeGeneration is an sstable id for the second sstable that no file in
// dir has: the next integer after every one there (and after the first
// sstable's), or a new time-UUID when the first one has a UUID id.
func freeGeneration(fsys vfs.FS, dir, first string) (string, error) {
	n, ok := format.SequenceGeneration(first)
	if !ok {
		u := txnlog.NewTimeUUID()
		return format.UUIDGeneration(u.Tick(), u.LSB), nil
	}
	ents, err := fsys.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	for _, e := range ents {
		if d, _, err := format.ParseDescriptor(e.Name()); err == nil {
			if g, ok := format.SequenceGeneration(d.Generation); ok {
				n = max(n, g)
			}
		}
	}
	return fmt.Sprint(n + 1), nil
}

// verifyOutputs checks every sstable written, where it is staged, with
// the strict verifier before anything is moved into place.
func (sc *scrubber) verifyOutputs(made []format.Descriptor, stagedDir string) error {
	if !sc.rep.Rewritten && !sc.rep.Repaired() {
		// Every file is a copy of the source's, which verify and the
		// check (every cell decoded) have just passed.
		sc.rep.Verified = true
		return nil
	}
	for _, d := range made {
		p := d.WithDir(stagedDir).Path(format.ComponentData)
		var r *verify.Report
		if sc.rep.Rewritten {
			r = verify.SSTable(p, sstable.Options{}, nil)
		} else {
			// Data.db is the source's, byte for byte (its checksums are
			// checked again), whose every cell check decoded: the rest
			// is structure.
			r = verify.SSTableChecksumsAndStructure(p, sstable.Options{})
		}
		if !r.OK() {
			var msgs []string
			for _, p := range r.Problems {
				msgs = append(msgs, p.String())
			}
			return fmt.Errorf("%s: the scrubbed sstable does not verify, nothing was moved into place: %s", sc.dataPath, strings.Join(msgs, "; "))
		}
	}
	sc.rep.Verified = true
	return nil
}

// scrubber is one sstable being scrubbed.
type scrubber struct {
	src      *sstable.SSTable
	o        Options
	from, to format.Version
	dataPath string
	rep      *Report
	// problems are verify's findings on the source, by component.
	problems map[string][]verify.Problem
	verified *verify.Report
	// count is the partition count check found (rebuild).
	count int64
	// prebuilt are the index and filter check built in memory as it
	// decoded Data.db (nil when it did not, or could not).
	prebuilt map[string][]byte
	// statsBad says what was wrong with Statistics.db (its header's
	// minima, values Data.db contradicts): the rewrite writes it anew.
	statsBad string
	// statsDiff are Statistics.db's bounds and counts that are not the
	// rows' (check), and collected the rows' own: a rebuild writes
	// Statistics.db with them.
	statsDiff []stats.Mismatch
	collected *stats.Stats
}

func open(srcPath string, o Options) (*scrubber, error) {
	desc, _, err := format.ParseDescriptor(srcPath)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(desc.Path(format.ComponentStatistics)); err != nil {
		return nil, fmt.Errorf("%s: Statistics.db is missing: %w; it cannot be rebuilt from Data.db, which stores every timestamp, TTL and "+
			"local deletion time as a delta from the EncodingStats minima that only Statistics.db's serialization header holds "+
			"(a schema gives the columns, not those minima): restore it from a snapshot or a backup", desc.Path(format.ComponentData), os.ErrNotExist)
	}
	src, err := sstable.Open(srcPath, sstable.Options{Access: o.Access})
	var triesErr error
	if ce, ok := corrupt.As(err); ok && (ce.Component == format.ComponentPartitions || ce.Component == format.ComponentRows) {
		// Derived from Data.db: open without them, and rebuild them.
		triesErr = err
		src, err = sstable.Open(srcPath, sstable.Options{Access: o.Access, NoTries: true})
	}
	if err != nil {
		return nil, err
	}
	sc := &scrubber{src: src, o: o, from: src.Version(), to: o.To, dataPath: src.Path(format.ComponentData)}
	if sc.to.Name == "" {
		sc.to = sc.from
	}
	sc.rep = &Report{SSTable: sc.dataPath, Mode: o.Mode.String(), From: sc.from.Name, To: sc.to.Name,
		Lost: []Lost{}, Skipped: []ByteRange{}, Rows: []RowChange{}, Components: []Component{}, Outputs: []string{}}
	if err := sc.refuse(); err != nil {
		src.Close()
		return nil, err
	}
	if o.CheckSchema != nil {
		if err := o.CheckSchema(src); err != nil {
			src.Close()
			return nil, err
		}
	}
	sc.verified = verify.SSTableChecksumsAndStructure(sc.dataPath, sstable.Options{Access: o.Access})
	sc.problems = map[string][]verify.Problem{}
	for _, p := range sc.verified.Problems {
		sc.problems[p.Component] = append(sc.problems[p.Component], p)
	}
	if triesErr != nil {
		// verify could not open the sstable either: nothing derived was
		// checked, so everything derived is rebuilt.
		for _, c := range []string{format.ComponentPartitions, format.ComponentRows, format.ComponentFilter, format.ComponentDigest, format.ComponentCRC, format.ComponentTOC} {
			if len(sc.problems[c]) == 0 {
				sc.problems[c] = []verify.Problem{{File: sc.src.Path(c), Component: c, Offset: -1, Message: "not checked: the sstable opens only without its tries (" + triesErr.Error() + ")"}}
			}
		}
	}
	return sc, nil
}

// refuse says why the sstable cannot be scrubbed into the target version.
func (sc *scrubber) refuse() error {
	st := sc.src.Stats()
	if st.Validation == nil || st.Header == nil {
		return fmt.Errorf("%s: Statistics.db lacks its validation or serialization header component, which scrub needs", sc.src.Path(format.ComponentStatistics))
	}
	if !sc.to.HasUIntDeletionTime && sc.from.HasUIntDeletionTime && st.Stats != nil &&
		st.Stats.MaxLocalDeletionTime != stats.NoDeletionTime && st.Stats.MaxLocalDeletionTime > legacyCap {
		return fmt.Errorf("%s: holds deletion times up to %d, past the 2038 limit of %s; scrub it into %s or later", sc.dataPath, st.Stats.MaxLocalDeletionTime, sc.to.Name, sc.from.Name)
	}
	return nil
}

func (sc *scrubber) close() { sc.src.Close() }

// run scrubs: decide, then write through out (nil: validate).
func (sc *scrubber) run(out outputs) error {
	rebuild, err := sc.decide()
	if err != nil {
		return err
	}
	if rebuild {
		return sc.rebuild(out)
	}
	return sc.rewrite(out)
}

// noteDropped notes the source's components the output has no place for
// (a SASI index's SI_*.db, a CRC.db beside a compressed Data.db): they are
// not carried over.
func (sc *scrubber) noteDropped(written []string) {
	ents, err := os.ReadDir(sc.src.Desc().Dir)
	if err != nil {
		return
	}
	prefix := sc.src.Desc().Prefix()
	var indexes []string
	files := map[string][]string{}
	for _, e := range ents {
		c, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || e.IsDir() || slices.Contains(written, c) || c == format.ComponentTOC {
			continue
		}
		if ic, ok := format.ParseIndexComponent(c); ok {
			who := string(ic.Kind) + " index " + ic.Index
			if ic.PerSSTable() {
				who = "SAI's per-sstable components"
			}
			if files[who] == nil {
				indexes = append(indexes, who)
			}
			files[who] = append(files[who], e.Name())
			continue
		}
		sc.rep.note(fmt.Sprintf("%s is not carried over: the output has no such component", e.Name()))
	}
	for _, who := range indexes {
		sc.rep.note(fmt.Sprintf("%s (%s) not carried over: they describe the source's rows, and Cassandra builds the index anew for the sstable written",
			who, strings.Join(files[who], ", ")))
	}
}

// decide says whether Data.db can be kept as it is (rebuild: it is whole,
// in the target version, and nothing in it needs rewriting) or must be
// rewritten partition by partition, and notes why.
func (sc *scrubber) decide() (rebuild bool, err error) {
	why := sc.needsRewrite()
	if why == "" {
		if why, err = sc.check(); err != nil {
			return false, err
		}
	}
	if why == "" {
		return true, nil
	}
	sc.rep.note("Data.db is rewritten: " + why)
	return false, nil
}

// needsRewrite says why Data.db cannot be kept as it is, from what verify
// found and the target version; "" when it may be (check decides).
func (sc *scrubber) needsRewrite() string {
	if sc.to.Name != sc.from.Name || sc.to.Format != sc.from.Format {
		return fmt.Sprintf("the output is %s, the source %s", sc.to.Name, sc.from.Name)
	}
	for _, c := range []string{format.ComponentData, format.ComponentCompressionInfo, format.ComponentStatistics, "sstable"} {
		if ps := sc.problems[c]; len(ps) > 0 {
			if c == format.ComponentStatistics {
				sc.statsBad = ps[0].Message
			}
			return fmt.Sprintf("%s: %s", c, ps[0].Message)
		}
	}
	if why := minimaInvalid(sc.src.Stats().Header, sc.from, sc.to); why != "" {
		sc.statsBad = "its serialization header's minima: " + why
		return "the serialization header's minima: " + why
	}
	return ""
}

// decoder returns a decoder of the source that seek repositions.
func (sc *scrubber) decoder() *rows.Decoder { return sc.src.Decoder(0) }

// seek moves dec to pos, forgetting any partition in progress.
func seek(dec *rows.Decoder, pos int64) error {
	s, ok := dec.Source().(interface{ SeekTo(int64) error })
	if !ok {
		return errors.New("scrub: the decoder's source cannot seek")
	}
	dec.Reset()
	return s.SeekTo(pos)
}

// progress reports one pass's position.
func (sc *scrubber) progress(done int64) {
	if sc.o.Progress != nil {
		sc.o.Progress(done, sc.src.Data().Length())
	}
}
