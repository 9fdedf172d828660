package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/livecheck"
	"github.com/sstabletool/sstabletool/internal/tablefiles"
	"github.com/sstabletool/sstabletool/internal/words"
)

// Flags of the offline tools that stand in for Cassandra's tools/bin ones
// (repaired-set, level-reset, relevel, util, expired-blockers): they take
// paths, or KEYSPACE TABLE with --data, as Cassandra's take a keyspace and
// a table resolved through cassandra.yaml.
var (
	dataFlag = &cli.StringSliceFlag{Name: "data", Usage: "a node's data `DIR` (one of its data_file_directories; repeat for each): " +
		"the arguments are then KEYSPACE TABLE, as Cassandra's tool takes them"}
	forceFlag = &cli.BoolFlag{Name: "force", Usage: "change the files even though a process has files of the table open (a running Cassandra: stop it first)"}
)

// tableTargets is what the arguments name: the paths themselves, or with
// --data, KEYSPACE TABLE's directory in each data directory. A name with
// several directories (a table dropped and created again) takes the one
// whose id the node's system_schema gives the table, else the one that
// holds sstables; with more than one, the user names it.
func tableTargets(c *cli.Context) ([]string, error) {
	data := c.StringSlice("data")
	if len(data) == 0 {
		return c.Args().Slice(), nil
	}
	name := c.Command.Name
	if c.NArg() != 2 {
		return nil, usageError("%s: with --data give KEYSPACE TABLE, got %d arguments %s (see sstabletool %s --help)", name, c.NArg(), strings.Join(c.Args().Slice(), " "), name)
	}
	ks, table := c.Args().Get(0), c.Args().Get(1)
	var out []string
	for _, d := range data {
		dirs, err := format.TableDirsIn(d, ks, table)
		if err != nil {
			return nil, badData(err)
		}
		var live, byID []format.TableDir
		id, origin, hasID := "", "", false
		if len(dirs) > 1 {
			id, origin, hasID = nodeTableID(d, ks, table)
		}
		for _, t := range dirs {
			if hasSSTables(t.Dir) {
				live = append(live, t)
			}
			if hasID && t.ID == id {
				byID = append(byID, t)
			}
		}
		switch {
		case len(dirs) == 1:
			out = append(out, dirs[0].Dir)
		case len(byID) == 1:
			fmt.Fprintf(stderr, "sstabletool: %s.%s: taking %s, the table's id in %s; the other %s (a dropped table's) left alone\n",
				ks, table, byID[0].Dir, origin, words.Plural(len(dirs)-1, "directory"))
			out = append(out, byID[0].Dir)
		case hasID && len(byID) == 0:
			return nil, usageError("%s: %s.%s has %d directories in %s, and none has the table's id in %s, %s; give the directory instead of KEYSPACE TABLE", name, ks, table, len(dirs), d, origin, id)
		case len(live) == 1:
			out = append(out, live[0].Dir)
		case len(dirs) > 1:
			var names []string
			for _, t := range dirs {
				names = append(names, t.Dir)
			}
			return nil, usageError("%s: %s.%s has %d directories in %s (a table dropped and created again leaves one per table id), %d of them with sstables: %s; give the directory of the live table instead of KEYSPACE TABLE",
				name, ks, table, len(dirs), d, len(live), strings.Join(names, ", "))
		}
	}
	if len(out) == 0 {
		return nil, usageError("%s: no directory of table %s.%s in %s (expected %s/%s/%s-<table id>)", name, ks, table, strings.Join(data, ", "), data[0], ks, table)
	}
	return out, nil
}

// hasSSTables says whether dir holds a Data.db of its own (not in a
// snapshot or backup).
func hasSSTables(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), "-"+format.ComponentData) {
			return true
		}
	}
	return false
}

// sstableDirs are the directories of the sstables found, in order, once
// each.
func sstableDirs(found []format.Found) []string {
	var out []string
	for _, f := range found {
		d := filepath.Dir(f.Path)
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// tableDirsUnder are the directories the paths name that hold files (a
// table's, in Cassandra's layout): each directory argument, with
// recursive every directory below it too (snapshots/, backups/ and
// sstabletool's staging directories skipped, as a scan skips them); a file
// argument names its directory.
func tableDirsUnder(paths []string, recursive bool) ([]string, error) {
	var out []string
	add := func(d string) {
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			add(filepath.Dir(p))
			continue
		}
		if !recursive {
			add(p)
			continue
		}
		err = filepath.WalkDir(p, func(q string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !e.IsDir() {
				return nil
			}
			if q != p && (e.Name() == format.SnapshotsDir || e.Name() == format.BackupsDir || strings.HasPrefix(e.Name(), format.StagingDirPrefix)) {
				return filepath.SkipDir
			}
			if hasFiles(q) {
				add(q)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func hasFiles(dir string) bool {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !e.IsDir() {
			return true
		}
	}
	return false
}

// refuseLive refuses, unless --force, when a process holds files of the
// directories (or of the commit logs beside their data directory) open:
// a running node, which would overwrite or keep using what the command
// changes. Cassandra's tools only ask for the node to be stopped.
func refuseLive(c *cli.Context, dirs []string) error {
	if c.Bool("force") {
		return nil
	}
	all := append(append([]string{}, dirs...), livecheck.CommitLogDirs(dirs)...)
	if err := livecheck.OpenFiles(all); err != nil {
		return cli.Exit(c.Command.Name+": "+err.Error(), exitBadData)
	}
	return nil
}

// cleanedLog is what removing an unfinished transaction's leftovers did,
// as --json lists it.
type cleanedLog struct {
	Log     string   `json:"log"`
	Deleted []string `json:"deleted"`
	Kept    string   `json:"outcome"`
	Warning string   `json:"warning,omitempty"`
	Problem string   `json:"problem,omitempty"`
}

// removeLeftovers cleans up the unfinished transactions of dirs as
// Cassandra's startup does, which sstablelevelreset and
// sstableofflinerelevel do first too; say prints a line (nil: nothing).
// A log Cassandra would refuse is left as it is and fails the command.
func removeLeftovers(dirs []string, say func(string)) ([]cleanedLog, error) {
	outs, err := tablefiles.Cleanup(nil, dirs)
	var done []cleanedLog
	for _, o := range outs {
		cl := cleanedLog{Log: o.Log.Replicas[0], Deleted: o.Deleted, Warning: o.Verdict.Warning}
		if cl.Deleted == nil {
			cl.Deleted = []string{}
		}
		switch {
		case !o.Verdict.OK:
			cl.Kept, cl.Problem = "refused", o.Verdict.Problem
		case o.Verdict.Committed:
			cl.Kept = "committed: the sstables it replaced were deleted"
		default:
			cl.Kept = "not committed: the sstables it was writing were deleted"
		}
		done = append(done, cl)
		if say != nil && o.Verdict.OK {
			say(fmt.Sprintf("removed the leftovers of %s (%s; %s deleted)", cl.Log, cl.Kept, words.Plural(len(cl.Deleted), "file")))
		}
	}
	return done, err
}
