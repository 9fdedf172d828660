package upgrade

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/format/txnlog"
)

// Table is one directory of sstables: a table's directory
// (<data>/<keyspace>/<table>-<id>/), a secondary index's (.<index>/ inside
// it), or any other directory holding sstables.
type Table struct {
	Dir      string `json:"dir"`
	Keyspace string `json:"keyspace,omitempty"`
	Table    string `json:"table,omitempty"`
	// Upgrade lists the Data.db paths of the sstables to rewrite, in id
	// order.
	Upgrade []string `json:"upgrade"`
	// UUIDIDs: new sstables get time-UUID ids (the directory already uses
	// them, Cassandra 4.1's uuid_sstable_identifiers_enabled), else the
	// next free integer generations.
	UUIDIDs bool `json:"uuid_ids"`
	// Logs are the transaction logs found in the directory.
	Logs []*txnlog.Log `json:"-"`

	mu      sync.Mutex
	canon   string // the directory with symlinks resolved (what log records name)
	nextGen int    // the next free integer generation
}

// Skip is an sstable or directory the upgrade leaves as it is, and why.
type Skip struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Plan is what an upgrade will do.
type Plan struct {
	To     format.Version `json:"-"`
	Tables []*Table       `json:"tables"`
	// Skipped are sstables left as they are (already in the version,
	// another format, not live data) and the snapshots/ and backups/
	// directories, which are never touched.
	Skipped []Skip `json:"skipped"`
	// Failed are arguments or sstables that could not be used.
	Failed []Skip `json:"failed,omitempty"`
	// Count is the number of sstables to rewrite.
	Count int `json:"count"`

	// sel says why an sstable is not rewritten ("" when it is).
	sel func(d format.Descriptor) string
}

// Names says which keyspace and table a directory of sstables is for,
// from its place in a data directory (<data>/<keyspace>/<table>-<id>/,
// snapshots and backups included, and a secondary index's own table in
// .<index>/, "<table>.<index>": format.TableOf); "" when it does not say.
func Names(dir string) (keyspace, table string) {
	t := format.TableOf(dir)
	if !t.HasID() {
		return "", ""
	}
	return t.Keyspace, t.Table
}

// NewPlan finds the directories of sstables under paths (each a data
// directory, a keyspace's, a table's or a secondary index's) and what in
// them is older than to. snapshots/ and backups/ are left alone, and so
// are sstabletool's staging directories. A directory named directly is
// taken as it is, whatever its name.
func NewPlan(paths []string, to format.Version) (*Plan, error) {
	if to.IsBTI() {
		return nil, fmt.Errorf("upgrade writes big-format sstables; %s is %s", to.Name, to.Format)
	}
	return newPlan(paths, to, func(d format.Descriptor) string {
		switch v := d.Version; {
		case v.Format != format.Big:
			return fmt.Sprintf("%s-%s: not the big format", v.Format, v.Name)
		case v.Name == to.Name:
			return "already " + v.Name
		case v.Name > to.Name:
			return fmt.Sprintf("%s is newer than %s: upgrade never downgrades (convert --to %s writes a copy elsewhere)", v.Name, to.Name, to.Name)
		}
		return ""
	})
}

// NewPlanAll is NewPlan for a rewrite of every live sstable, of any
// format and version (scrub in place, with Options.Rewriter); to only
// names the run's target in the report.
func NewPlanAll(paths []string, to format.Version) (*Plan, error) {
	return newPlan(paths, to, func(format.Descriptor) string { return "" })
}

// NewPlanSelect is NewPlanAll for the live sstables sel accepts (it
// returns "" for those and why not for the others, which the plan lists
// as skipped): split and filter, which rewrite the sstables named on the
// command line, pass their directories and select those.
func NewPlanSelect(paths []string, to format.Version, sel func(format.Descriptor) string) (*Plan, error) {
	return newPlan(paths, to, sel)
}

func newPlan(paths []string, to format.Version, sel func(format.Descriptor) string) (*Plan, error) {
	p := &Plan{To: to, sel: sel}
	seen := map[string]bool{}
	for _, arg := range paths {
		fi, err := os.Stat(arg)
		switch {
		case err != nil:
			p.Failed = append(p.Failed, Skip{arg, err.Error()})
		case !fi.IsDir():
			p.Failed = append(p.Failed, Skip{arg, "not a directory: a data directory, a keyspace's or a table's is expected (each sstable in it is considered)"})
		default:
			if err := p.walk(arg, seen); err != nil {
				return nil, err
			}
		}
	}
	for _, t := range p.Tables {
		p.Count += len(t.Upgrade)
	}
	return p, nil
}

// tableDirs are the directories of the plan's tables.
func (p *Plan) tableDirs() []string {
	out := make([]string, 0, len(p.Tables))
	for _, t := range p.Tables {
		out = append(out, t.Dir)
	}
	return out
}

func (p *Plan) walk(dir string, seen map[string]bool) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		p.Failed = append(p.Failed, Skip{dir, err.Error()})
		return nil
	}
	if real, err = filepath.Abs(real); err != nil {
		return err
	}
	if seen[real] {
		return nil
	}
	seen[real] = true
	ents, err := os.ReadDir(dir)
	if err != nil {
		p.Failed = append(p.Failed, Skip{dir, err.Error()})
		return nil
	}
	if err := p.table(dir, real, ents); err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		sub := filepath.Join(dir, name)
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			if fi, err := os.Stat(sub); err == nil && fi.IsDir() {
				isDir = true
			}
		}
		if !isDir {
			continue
		}
		switch {
		case strings.HasPrefix(name, format.StagingDirPrefix):
			p.Skipped = append(p.Skipped, Skip{sub, "staging directory of an interrupted sstabletool convert"})
		case name == format.SnapshotsDir:
			p.Skipped = append(p.Skipped, Skip{sub, "snapshots are left alone"})
		case name == format.BackupsDir:
			p.Skipped = append(p.Skipped, Skip{sub, "incremental backups are left alone"})
		default:
			if err := p.walk(sub, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// table plans one directory, if it holds sstables or transaction logs.
func (p *Plan) table(dir, real string, ents []os.DirEntry) error {
	hasAny := false
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		if txnlog.IsLogName(e.Name()) {
			hasAny = true
			break
		}
		if _, _, err := format.ParseDescriptor(e.Name()); err == nil {
			hasAny = true
			break
		}
	}
	if !hasAny {
		return nil
	}
	if strings.ContainsAny(real, ",\n\r") {
		p.Failed = append(p.Failed, Skip{dir, "the path holds a comma or a line break, which Cassandra's transaction log records cannot hold"})
		return nil
	}
	t := &Table{Dir: dir, canon: real}
	t.Keyspace, t.Table = Names(dir)
	logs, err := txnlog.FindLogs(dir)
	if err != nil {
		p.Failed = append(p.Failed, Skip{dir, err.Error()})
		return nil
	}
	t.Logs = logs
	if err := t.scanIDs(); err != nil {
		p.Failed = append(p.Failed, Skip{dir, err.Error()})
		return nil
	}
	res := format.Find([]string{dir}, format.FindOptions{})
	for _, sk := range res.Skipped {
		p.Skipped = append(p.Skipped, Skip{sk.Path, sk.Reason.String() + ": " + sk.Detail})
	}
	var up []format.Descriptor
	for _, f := range res.SSTables {
		if f.Err != nil {
			p.Failed = append(p.Failed, Skip{f.Path, f.Err.Error()})
			continue
		}
		d, _, err := format.ParseDescriptor(f.Path)
		if err != nil {
			p.Failed = append(p.Failed, Skip{f.Path, err.Error()})
			continue
		}
		switch why := p.sel(d); {
		case why != "":
			p.Skipped = append(p.Skipped, Skip{f.Path, why})
		default:
			if _, err := os.Stat(d.Path(format.ComponentData)); err != nil {
				p.Failed = append(p.Failed, Skip{f.Path, err.Error()})
				continue
			}
			up = append(up, d)
		}
	}
	slices.SortFunc(up, func(a, b format.Descriptor) int { return format.CompareGenerations(a.Generation, b.Generation) })
	for _, d := range up {
		t.Upgrade = append(t.Upgrade, d.Path(format.ComponentData))
	}
	p.Tables = append(p.Tables, t)
	return nil
}

// scanIDs finds the ids in use: every sstable file name in the directory,
// its backups/ and snapshots/*/ (Cassandra's generator counts the
// directory and backups; snapshots are counted too, so that a snapshot
// copied back never collides), and every sstable a transaction log names.
// The directory uses UUID ids when any live sstable has one.
func (t *Table) scanIDs() error {
	maxGen := 0
	note := func(name string, live bool) {
		d, _, err := format.ParseDescriptor(name)
		if err != nil {
			return
		}
		if n, ok := format.SequenceGeneration(d.Generation); ok {
			maxGen = max(maxGen, n)
		} else if live && format.IsUUIDGeneration(d.Generation) {
			t.UUIDIDs = true
		}
	}
	list := func(dir string, live bool) error {
		ents, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range ents {
			if !e.IsDir() {
				note(e.Name(), live)
			}
		}
		return nil
	}
	if err := list(t.Dir, true); err != nil {
		return err
	}
	if err := list(filepath.Join(t.Dir, format.BackupsDir), false); err != nil {
		return err
	}
	snaps, _ := os.ReadDir(filepath.Join(t.Dir, format.SnapshotsDir))
	for _, s := range snaps {
		if s.IsDir() {
			if err := list(filepath.Join(t.Dir, format.SnapshotsDir, s.Name()), false); err != nil {
				return err
			}
		}
	}
	for _, l := range t.Logs {
		for _, r := range l.Records {
			if r.Path != "" {
				note(r.FileName()+"Data.db", false)
			}
		}
	}
	if maxGen == 1<<31-1 {
		return fmt.Errorf("generation %d is the largest an int holds; no next one", maxGen)
	}
	t.nextGen = maxGen + 1
	return nil
}
