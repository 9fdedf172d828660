package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/statsedit"
	"github.com/sstabletool/sstabletool/internal/words"
	"github.com/sstabletool/sstabletool/reader"
)

// repairedSetCommand is the repaired-set command.
func repairedSetCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "repaired-set",
		Usage:     "mark sstables repaired or unrepaired in their Statistics.db (sstablerepairedset, without a JVM)",
		ArgsUsage: "--really-set --is-repaired|--is-unrepaired (PATH... | -f LISTFILE | --data DIR KEYSPACE TABLE)",
		Description: "What sstablerepairedset does, with its options: --is-repaired sets each sstable's repairedAt to its\n" +
			"Data.db's modification time (milliseconds), --is-unrepaired to 0; both clear the pending repair session\n" +
			"and the transient flag (MetadataSerializer.mutateRepairMetadata). Use it before switching a table to\n" +
			"incremental repair, so that sstables a full repair covered are not repaired again, or to put sstables\n" +
			"back into the unrepaired set. PATH is any component of an sstable or a directory (-r descends); -f\n" +
			"reads the paths from a file, one per line (as `find ... -mtime +14` prints them); --data DIR KEYSPACE\n" +
			"TABLE takes every sstable of the table. --really-set is required, as Cassandra's tool requires it.\n\n" +
			"Only Statistics.db changes, and in it only those fields and the stats component's CRC32: the file is\n" +
			"decoded, changed, encoded again (a file sstabletool would not encode back to the same bytes is refused),\n" +
			"written to Statistics.db.tmp, fsynced and renamed over the original, as Cassandra writes it. The node must\n" +
			"be stopped: a process holding the table's files open is named and the command refuses (--force overrides).\n\n" +
			"Exit codes: 0 done, 2 an sstable could not be read or changed (the others are), bad usage, or a live node.\n\n" +
			"Examples:\n" +
			"  sstabletool repaired-set --really-set --is-repaired /var/lib/cassandra/data/shop/orders-4a4e3f70c67c11eeb4a4d93dc8a1f6a2\n" +
			"  sstabletool repaired-set --really-set --is-unrepaired nc-1-big-Data.db\n" +
			"  find /var/lib/cassandra/data/shop/ -name '*Data.db' -mtime +14 > /tmp/old-sstables.txt   # repaired two weeks ago\n" +
			"  sstabletool repaired-set --really-set --is-repaired -f /tmp/old-sstables.txt\n" +
			"  sstabletool repaired-set --really-set --is-repaired --data /var/lib/cassandra/data shop orders --json",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "really-set", Usage: "required: confirms the node is stopped and the metadata is to be changed"},
			&cli.BoolFlag{Name: "is-repaired", Usage: "mark repaired: repairedAt is the Data.db's modification time"},
			&cli.BoolFlag{Name: "is-unrepaired", Usage: "mark unrepaired: repairedAt 0"},
			&cli.StringFlag{Name: "f", Usage: "read the sstable paths from `LISTFILE`, one per line"},
			dataFlag, forceFlag, recursiveFlag, jsonFlag,
		},
		Action: repairedSetAction,
	}, argSpec{min: 0, max: -1, what: "sstable or directory"})
}

// repairedSetUsage is sstablerepairedset's own message for a command line
// without --really-set and one of the two modes.
const repairedSetUsage = "This command should be run with Cassandra stopped, otherwise you will get very strange behavior\n" +
	"Verify that Cassandra is not running and then execute the command like this:\n" +
	"Usage: sstabletool repaired-set --really-set [--is-repaired | --is-unrepaired] [-f <sstable-list> | <sstables>]"

// mutated is one sstable a Statistics.db edit changed, or left as it was,
// as --json lists it.
type mutated struct {
	SSTable string `json:"sstable"`
	*statsedit.Result
}

func repairedSetAction(c *cli.Context) error {
	repaired, unrepaired := c.Bool("is-repaired"), c.Bool("is-unrepaired")
	if !c.Bool("really-set") || repaired == unrepaired {
		return usageError("%s", repairedSetUsage)
	}
	paths, err := tableTargets(c)
	if err != nil {
		return err
	}
	if list := c.String("f"); list != "" {
		if c.NArg() > 0 {
			return usageError("repaired-set: give the sstables either in -f %s or as arguments, not both", list)
		}
		b, err := reader.ReadFile(list)
		if err != nil {
			return usageError("repaired-set: -f: %v", err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" {
				paths = append(paths, line)
			}
		}
		if len(paths) == 0 {
			return usageError("repaired-set: -f %s lists no sstable", list)
		}
	} else if len(paths) == 0 {
		return usageError("%s", repairedSetUsage)
	}
	sc, err := findSSTablesIn(c, paths)
	if err != nil {
		return err
	}
	if err := refuseLive(c, sstableDirs(sc.found)); err != nil {
		return err
	}
	sc.verb = "changed"
	js := c.Bool("json")
	all := []any{}
	changed, same := 0, 0
	err = sc.each(func(p string) error {
		d, _, err := format.ParseDescriptor(p)
		if err != nil {
			return err
		}
		to := statsedit.Fields{}
		if repaired {
			fi, err := os.Stat(p)
			if err != nil {
				return err
			}
			// Files.getLastModifiedTime(...).toMillis().
			to.RepairedAt = fi.ModTime().UnixMilli()
		}
		res, err := statsedit.Mutate(nil, d, statsedit.Change{Repair: &to})
		if err != nil {
			return err
		}
		all = append(all, mutated{SSTable: p, Result: res})
		if res.Changed {
			changed++
		} else {
			same++
		}
		if !js {
			fmt.Fprintln(stdout, repairLine(p, res))
		}
		return nil
	}, func(e sstableError) { all = append(all, e) })
	if err != nil {
		return err
	}
	if js {
		if err := writeJSON(all); err != nil {
			return err
		}
	} else {
		state := "repaired"
		if unrepaired {
			state = "unrepaired"
		}
		fmt.Fprintf(stdout, "marked %s %s", words.Plural(changed, "sstable"), state)
		if same > 0 {
			fmt.Fprintf(stdout, "; %d already %s", same, map[bool]string{true: "was", false: "were"}[same == 1])
		}
		fmt.Fprintln(stdout)
	}
	return sc.err()
}

// repairLine says what repaired-set did to one sstable.
func repairLine(p string, r *statsedit.Result) string {
	b, a := r.Before, r.After
	if !r.Changed {
		return fmt.Sprintf("%s: repairedAt %s already (unchanged)", p, repairedAtText(a.RepairedAt))
	}
	s := fmt.Sprintf("%s: repairedAt %s -> %s", p, repairedAtText(b.RepairedAt), repairedAtText(a.RepairedAt))
	if b.PendingRepair != nil {
		s += fmt.Sprintf(", pending repair %s cleared", b.PendingRepair)
	}
	if b.IsTransient {
		s += ", no longer transient"
	}
	return s
}

// repairedAtText is a repairedAt with its time: 0 is "0 (unrepaired)".
func repairedAtText(ms int64) string {
	if ms == 0 {
		return "0 (unrepaired)"
	}
	return fmt.Sprintf("%d (%s)", ms, time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00"))
}
