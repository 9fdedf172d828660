package split

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/format/txnlog"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/writer"
)

// Write rewrites the sstable at srcPath (any component) into outDir (see
// PrepareOut, which a run calls first), the source only read: every output is staged in one hidden directory inside
// outDir, verified there, and committed at once (package writer: a kill at
// any moment leaves either none of them visible or, once the commit is
// decided, all of them after the next run into outDir). The outputs take
// the next free ids in outDir (time-UUIDs when the source has one). A
// split of an sstable no larger than the size writes nothing (Unchanged);
// a filter writes a copy even when it drops nothing, and nothing when it
// drops everything.
func Write(srcPath, outDir string, o Options) (*Result, error) {
	return writeOn(vfs.Default, srcPath, outDir, o)
}

// writeOn is Write through fsys: the seam where tests crash it.
func writeOn(fsys vfs.FS, srcPath, outDir string, o Options) (*Result, error) {
	rw, err := open(srcPath, o)
	if err != nil {
		return nil, err
	}
	defer rw.close()
	if why := rw.unneeded(); why != "" {
		rw.res.Unchanged, rw.res.Why = true, why
		return rw.res, nil
	}
	// Leftovers of a killed run are repaired first, so that the ids are
	// chosen among the files they leave.
	var recovered []string
	if _, err := fsys.Stat(outDir); err == nil {
		if recovered, err = writer.Recover(fsys, outDir); err != nil {
			return rw.res, err
		}
	}
	first, err := freeGeneration(fsys, outDir, rw.src.Desc().Generation, "")
	if err != nil {
		return rw.res, err
	}
	firstDesc := format.Descriptor{Dir: outDir, Version: rw.to, Generation: first}
	st, err := writer.NewStaging(fsys, outDir, firstDesc.Prefix())
	if err != nil {
		return rw.res, err
	}
	rw.res.Recovered = append(recovered, st.Recovered()...)
	so := &stagedOutputs{fsys: fsys, st: st, dir: outDir, first: first, srcGen: rw.src.Desc().Generation}
	err = rw.run(so)
	if err == nil && len(rw.made) > 0 && !o.NoVerify {
		err = rw.verifyOutputs()
	}
	if err == nil && len(rw.made) > 0 {
		err = st.Commit()
	}
	if err != nil || len(rw.made) == 0 {
		st.Abort()
	}
	if err != nil {
		rw.res.Outputs = rw.res.Outputs[:0]
		return rw.res, err
	}
	return rw.res, nil
}

// Writes reports whether Write writes anything for the sstable at
// srcPath: not for a split of one no larger than the size or holding one
// partition; a filter always does (a copy even when it drops nothing,
// nothing only when it drops everything). Commands ask before writing,
// to say what becomes of each index.
func Writes(srcPath string, o Options) (bool, error) {
	rw, err := open(srcPath, o)
	if err != nil {
		return false, err
	}
	defer rw.close()
	return rw.unneeded() == "", nil
}

// PrepareOut readies an output directory for a run of Write: the
// leftovers of a killed run are repaired first (a staging directory
// without its COMMIT marker removed, one with it completed: package
// writer), and a directory that then holds any sstable is refused, so that
// a run after a kill never writes a second copy of what the killed one
// committed. Outputs of several sources may then go into it in one run.
//
// SAI and SASI files whose sstable is gone (no Data.db of their name) are
// refused as convert refuses them under its output's name
// (*writer.StaleIndexError): Cassandra finds them by name alone and would
// take them for the index of an sstable written under that name. With
// dropIndexFiles they are removed instead, and named in dropped.
func PrepareOut(outDir string, dropIndexFiles bool) (recovered, dropped []string, err error) {
	return prepareOutOn(vfs.Default, outDir, dropIndexFiles)
}

func prepareOutOn(fsys vfs.FS, outDir string, dropIndexFiles bool) (recovered, dropped []string, err error) {
	if _, err := fsys.Stat(outDir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	recovered, err = writer.Recover(fsys, outDir)
	if err != nil {
		return recovered, nil, err
	}
	ents, err := fsys.ReadDir(outDir)
	if err != nil {
		return recovered, nil, err
	}
	type files struct {
		names   []string
		hasData bool
		index   int // SAI and SASI files
	}
	byPrefix := map[string]*files{}
	var prefixes []string
	for _, e := range ents {
		d, comp, err := format.ParseDescriptor(e.Name())
		if err != nil || e.IsDir() {
			continue
		}
		f := byPrefix[d.Prefix()]
		if f == nil {
			f = &files{}
			byPrefix[d.Prefix()] = f
			prefixes = append(prefixes, d.Prefix())
		}
		f.names = append(f.names, e.Name())
		f.hasData = f.hasData || comp == format.ComponentData
		if _, ok := format.ParseIndexComponent(comp); ok {
			f.index++
		}
	}
	var held, stale, stalePrefixes []string
	for _, p := range prefixes {
		switch f := byPrefix[p]; {
		case !f.hasData && f.index == len(f.names):
			stale = append(stale, f.names...)
			stalePrefixes = append(stalePrefixes, p)
		default:
			held = append(held, f.names...)
		}
	}
	if len(held) > 0 {
		why := ""
		if len(recovered) > 0 {
			why = fmt.Sprintf(" (%s)", strings.Join(recovered, "; "))
		}
		return recovered, nil, fmt.Errorf("output directory %s already holds sstables (%s)%s: give an empty directory, so that no partition is written twice", outDir, strings.Join(held, ", "), why)
	}
	if len(stale) > 0 && !dropIndexFiles {
		e := &writer.StaleIndexError{Dir: outDir, Files: stale}
		if len(stalePrefixes) == 1 {
			e.Prefix = stalePrefixes[0]
		}
		return recovered, nil, e
	}
	for _, p := range stalePrefixes {
		names, err := writer.DropStaleIndexFiles(fsys, outDir, p)
		dropped = append(dropped, names...)
		if err != nil {
			return recovered, dropped, err
		}
	}
	return recovered, dropped, nil
}

// unneeded says why an sstable needs no rewrite ("" when it does): a split
// of an sstable whose Data.db is no larger than the size (sstablesplit
// skips it: "its size is less than the split size"), or that holds a
// single partition.
func (rw *rewriter) unneeded() string {
	if rw.o.MaxSize <= 0 {
		return ""
	}
	if rw.res.DataBefore <= rw.o.MaxSize {
		return fmt.Sprintf("its size (%.3f MB) is less than the split size (%s)", float64(rw.res.DataBefore)/MiB, SizeText(rw.o.MaxSize))
	}
	if rw.singlePartition() {
		return "it holds a single partition, which no split can cut"
	}
	return ""
}

// SizeText prints a size as sstablesplit's -s gives it: whole MB
// ("50 MB"), or bytes with their unit.
func SizeText(n int64) string {
	switch {
	case n%MiB == 0:
		return fmt.Sprintf("%d MB", n/MiB)
	case n%1024 == 0:
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d bytes", n)
}

// stagedOutputs names the sstables of an out-of-place rewrite and stages
// them in one directory: committed at once.
type stagedOutputs struct {
	fsys   vfs.FS
	st     *writer.Staging
	dir    string
	first  string
	srcGen string
	last   string
}

func (s *stagedOutputs) newSSTable(v format.Version) (format.Descriptor, writer.Output, error) {
	gen := s.first
	if s.last != "" {
		var err error
		if gen, err = freeGeneration(s.fsys, s.dir, s.srcGen, s.last); err != nil {
			return format.Descriptor{}, nil, err
		}
	}
	s.last = gen
	return format.Descriptor{Dir: s.dir, Version: v, Generation: gen}, s.st.Output(), nil
}

func (s *stagedOutputs) stagedDir() string { return s.st.Dir() }

// freeGeneration is an id no file in dir has: past every integer
// generation there and past after (the last one this run took), or a new
// time-UUID when the source's id is one (srcGen).
func freeGeneration(fsys vfs.FS, dir, srcGen, after string) (string, error) {
	if _, ok := format.SequenceGeneration(srcGen); !ok {
		u := txnlog.NewTimeUUID()
		return format.UUIDGeneration(u.Tick(), u.LSB), nil
	}
	n := 0
	if a, ok := format.SequenceGeneration(after); ok {
		n = a
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
