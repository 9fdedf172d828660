package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/undump"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/writer"
)

// writeCommand is the write command: sstabledump JSON to an sstable.
func writeCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "write",
		Usage:     "write an sstable from sstabledump JSON (dump -t or dump -l output): to fix a value, or to build a test fixture",
		ArgsUsage: "FILE|- --out DIR [--schema FILE | --schema-from DATA_DIR [--table KS.TABLE] | --like SSTABLE] [--to VERSION]",
		Description: "Reads JSON as dump prints it (the pretty document, or JSON lines with -l; timestamps raw with -t\n" +
			"or as instants) and writes one new sstable into DIR under the next free generation, through a hidden\n" +
			"staging directory, fsynced and renamed into place only when complete (Data.db last): a killed write\n" +
			"leaves nothing visible, and its leftovers are cleaned up by the next one. Cassandra's json2sstable,\n" +
			"removed in 3.0; ScyllaDB's scylla sstable write.\n\n" +
			"The table's columns and types come from --schema (cqlsh DESCRIBE output; the table is --table, or the\n" +
			"one DIR names as <keyspace>/<table>-<id>/, or the file's only one); else from a node's own schema: the\n" +
			"system_schema of --schema-from DATA_DIR, or of the data directory DIR lies in (<data>/<keyspace>/\n" +
			"<table>-<id>/, the table the directory names, with its id), whose version (that of the sstable the\n" +
			"node wrote last in system_schema: one it reads), compression and bloom_filter_fp_chance are taken too;\n" +
			"or from --like, a reference sstable whose serialization header, partitioner, version and compression\n" +
			"the new one takes (by default). A directory a process holds files of open (a running node, whose next\n" +
			"flush may take the same generation) is refused unless --force: write elsewhere and load it with\n" +
			"nodetool import or sstableloader.\n\n" +
			"dump -t of the written sstable is byte for byte its input when the input is dump -t of an sstable of\n" +
			"the same version: dump's positions are kept, what dump does not print is written so that it prints the\n" +
			"same (a counter's shards, the header's EncodingStats: see docs/write.md). An edited input is written\n" +
			"all the same; the summary says from where its positions could not be kept.\n\n" +
			"The input is read at least twice (the first pass checks it: order, types, column names) and never held\n" +
			"whole, so it may be of any size; - reads standard input, copied to a temporary file first. Partitions\n" +
			"in the partitioner's order stream; others are sorted by an index of their keys (memory per partition).\n" +
			"Rows must be in clustering order. A cell that is not in the JSON is not written; a counter is written\n" +
			"as one shard holding its total. The written sstable is verified before it is committed (--no-verify\n" +
			"to write data that verify would flag, such as a fixture of a known problem).\n\n" +
			"Exit codes: 0 written, 1 the written sstable did not verify (nothing committed), 2 bad input or usage\n" +
			"(the error names the file, the line, column and byte, and what was expected).\n\n" +
			"Examples:\n" +
			"  sstabletool write rows.json --like nc-1-big-Data.db --out /tmp/fixed     # rows.json: dump -t nc-1-big-Data.db, a value edited\n" +
			"  sstabletool write rows.json --schema shop.cql --table shop.orders --to oa --out /tmp/orders\n" +
			"  sstabletool write rows.json --like nc-1-big-Data.db --to da --out /tmp/bti --json\n" +
			"  sstabletool write rows.json --out /var/lib/cassandra/data/shop/orders-4a4e3f70c67c11eeb4a4d93dc8a1f6a2  # the node stopped: its schema, version and compression\n" +
			"  sstabletool write rows.jsonl --jsonl --schema shop.cql --table shop.orders --partitioner ByteOrderedPartitioner --compression none --out /tmp/fx",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "output data `DIR` (created if missing)"},
			schemaFlag, tableFlag,
			&cli.StringFlag{Name: "like", Usage: "a reference `SSTABLE` whose columns and types, partitioner, version and compression the written one takes"},
			versionFlag(&cli.StringFlag{Name: "to", Usage: "the version written: nc, nb, oa or any big version ma..oa, or da (BTI); by default --like's, else the node's, else oa"}),
			oneOf(&cli.StringFlag{Name: "partitioner", Usage: "the partitioner (default: --like's, else Murmur3Partitioner)"},
				"Murmur3Partitioner", "RandomPartitioner", "ByteOrderedPartitioner", "OrderPreservingPartitioner").parsedBy(func(s string) error {
				_, err := token.ForName(s)
				return err
			}),
			&cli.BoolFlag{Name: "jsonl", Aliases: []string{"l"}, Usage: "the input is JSON lines (dump -l); without it either style is taken"},
			compressionFlag(&cli.StringFlag{Name: "compression", Value: "keep", Usage: "Data.db compression: keep (--like's, else the table's in the node's schema, else LZ4Compressor), none, or a compressor (LZ4Compressor, SnappyCompressor, DeflateCompressor, ZstdCompressor)"}, "keep"),
			&cli.IntFlag{Name: "chunk-length", Usage: "chunk length in KiB with --compression (default 16)"},
			&cli.BoolFlag{Name: "no-verify", Usage: "commit the sstable without verifying it first"},
			forceFlag, jsonFlag,
		},
		Action: writeAction,
	}, argSpec{min: 1, max: 1, what: "JSON file (or - for standard input)"}.withRequired("out"))
}

func writeAction(c *cli.Context) error {
	if c.IsSet("like") && (c.IsSet("schema") || c.IsSet("schema-from")) {
		return usageError("write: give the table's columns one way: --like SSTABLE, or --schema FILE, or --schema-from DIR")
	}
	dest := c.String("out")
	o := undump.Options{JSONLines: c.Bool("jsonl"), Verify: !c.Bool("no-verify")}
	var err error
	var refVersion format.Version
	var refCompression *writer.Compression
	var table *cqltype.TableSchema // the table's definition, without --like
	nodeData := ""                 // the data directory of the node whose schema gives the table
	if ref := c.String("like"); ref != "" {
		s, err := openSSTableNoSchema(c, ref)
		if err != nil {
			return badData(fmt.Errorf("--like: %w", err))
		}
		o.Header, o.Partitioner, err = undump.HeaderOfReference(s)
		refVersion = s.Version()
		if info := s.Data().Info(); info != nil {
			refCompression = writer.CompressionFrom(info)
		}
		s.Close()
		if err != nil {
			return badData(fmt.Errorf("--like: %w", err))
		}
		o.Reference = true
	} else {
		// --schema FILE, else --schema-from DIR, else the system_schema of
		// the data directory DIR is a table directory of.
		sf, err := loadSchema(c)
		if err != nil {
			return err
		}
		abs, err := filepath.Abs(dest)
		if err != nil {
			return usageError("--out: %v", err)
		}
		ts, _, err := sf.TableForDir(abs)
		if err != nil {
			return usageError("write: the table's columns: %v; give --schema FILE, --schema-from DIR or --like SSTABLE", err)
		}
		if o.Header, err = undump.HeaderOfTable(ts); err != nil {
			return usageError("write: %v", err)
		}
		o.Partitioner = stats.Murmur3Partitioner
		table = ts
		switch {
		case c.IsSet("schema"):
		case c.IsSet("schema-from"):
			nodeData = c.String("schema-from")
		default:
			nodeData = filepath.Dir(filepath.Dir(abs))
		}
	}
	if p := c.String("partitioner"); p != "" {
		part, err := token.ForName(p)
		if err != nil {
			return usageError("--partitioner: %v", err)
		}
		o.Partitioner = part.Name()
	}
	switch {
	case c.IsSet("to"):
		if o.Version, err = parseAnyVersion(c.String("to")); err != nil {
			return usageError("--to: %v", err)
		}
	case o.Reference:
		o.Version = refVersion
	case nodeData != "":
		// What the node wrote last, so that it can read what is written
		// for it (a 4.x node cannot read oa).
		if o.Version, err = nodeVersion(nodeData); err != nil {
			return usageError("write: %v; give --to VERSION", err)
		}
	default:
		o.Version = format.MustVersion("oa")
	}
	comp, none, err := parseCompression(c)
	if err != nil {
		return err
	}
	// The table's own compression and bloom filter settings, where its
	// definition has them (a node's schema does; a CQL file's options are
	// not kept).
	var tableComp *writer.Compression
	tableHasComp := false
	if table != nil {
		if m, ok, err := table.OptionMap("compression"); ok {
			defaultKiB := 64 // CompressionParams.DEFAULT_CHUNK_LENGTH before 4.0
			if o.Version.HasMaxCompressedLength {
				defaultKiB = 16
			}
			if err == nil {
				tableComp, err = writer.CompressionOfTable(m, defaultKiB)
			}
			if err != nil && !none && comp == nil {
				return usageError("write: table %s: %v; give --compression", table.Name(), err)
			}
			tableHasComp = true
		}
		if v, ok := table.Option("bloom_filter_fp_chance"); ok {
			if p, err := strconv.ParseFloat(v, 64); err == nil && p > 0 && p <= 1 {
				o.BloomFilterFPChance = p
			}
		}
	}
	switch {
	case none:
	case comp != nil:
		o.Compression = comp
	case tableHasComp:
		o.Compression = tableComp
		if o.Compression != nil && !o.Version.HasMaxCompressedLength {
			o.Compression.MaxCompressedLength = math.MaxInt32
		}
	case refCompression != nil:
		o.Compression = refCompression
		if !o.Version.HasMaxCompressedLength {
			o.Compression.MaxCompressedLength = math.MaxInt32
		}
	case o.Reference:
		// The reference is uncompressed: so is the copy.
	default:
		o.Compression = &writer.Compression{Class: "LZ4Compressor", Options: map[string]string{}, ChunkLength: 16 << 10, MaxCompressedLength: math.MaxInt32}
	}

	// A running node's directory: its next flush may take the generation
	// written here. Cassandra loads new sstables into a running node
	// through nodetool import (4.0+) or sstableloader, from elsewhere.
	if err := refuseLive(c, []string{dest}); err != nil {
		return cli.Exit(err.Error()+"; or write into another directory and load that into the node with nodetool import or sstableloader", exitBadData)
	}
	in, cleanup, err := openWriteInput(c.Args().First())
	if err != nil {
		return badData(err)
	}
	defer cleanup()
	prog := newProgress("write", 0)
	prog.unit = "bytes"
	o.Progress = func(done, total int64) { prog.total = total; prog.update(done) }
	res, err := undump.Write(in, dest, o)
	prog.done()
	if err != nil {
		var nv *undump.NotVerifiedError
		if errors.As(err, &nv) {
			return cli.Exit(err.Error(), exitProblem)
		}
		return badData(err)
	}
	if c.Bool("json") {
		var comps []map[string]any
		for _, cs := range res.Components {
			comps = append(comps, map[string]any{"component": cs.Name, "bytes": cs.Size})
		}
		return writeJSON(map[string]any{
			"data_path": res.DataPath, "version": res.Version, "input": in.Name,
			"partitions": res.Partitions, "rows": res.Rows, "range_tombstone_markers": res.Markers, "cells": res.Cells,
			"sorted": res.Sorted, "positions_kept": res.PositionsKept, "positions": res.Positions, "passes": res.Passes,
			"verified": res.Verified, "recovered": res.Recovered, "components": comps,
			"encoding_stats": map[string]int64{"min_timestamp": res.MinTimestamp, "min_local_deletion_time": res.MinLocalDeletionTime, "min_ttl": res.MinTTL},
		})
	}
	for _, n := range res.Recovered {
		fmt.Fprintf(stdout, "recovered: %s\n", n)
	}
	fmt.Fprintf(stdout, "wrote %s (%s, %d partitions, %d rows, %d range tombstone markers, %d cells)\n",
		res.DataPath, res.Version, res.Partitions, res.Rows, res.Markers, res.Cells)
	var notes []string
	if res.Sorted {
		notes = append(notes, "the partitions were sorted into the partitioner's order")
	}
	notes = append(notes, "positions: "+res.Positions)
	if res.Verified {
		notes = append(notes, "verified")
	}
	notes = append(notes, fmt.Sprintf("%d passes over the input", res.Passes))
	fmt.Fprintf(stdout, "  %s\n", strings.Join(notes, "; "))
	return nil
}

// nodeVersion is the sstable version of the node whose data directory is
// data: that of the sstable it wrote last in its system_schema (the
// Data.db modified last; of two at once, the later version). Every
// version there is one the node reads.
func nodeVersion(data string) (format.Version, error) {
	dir := filepath.Join(data, "system_schema")
	paths, err := format.FindSSTables([]string{dir}, true)
	if err != nil {
		return format.Version{}, err
	}
	var best format.Version
	var bestTime time.Time
	for _, p := range paths {
		d, _, err := format.ParseDescriptor(p)
		fi, serr := os.Stat(p)
		if err != nil || serr != nil {
			continue
		}
		if t := fi.ModTime(); best.Name == "" || t.After(bestTime) || t.Equal(bestTime) && d.Version.Name > best.Name {
			best, bestTime = d.Version, t
		}
	}
	if best.Name == "" {
		return format.Version{}, fmt.Errorf("no sstable in %s to take the node's version from", dir)
	}
	return best, nil
}

// openWriteInput opens the JSON to read (several times): a regular file as
// it is, standard input ("-") or anything else that cannot be read twice (a
// pipe) copied to a temporary file first, through the FS seam.
func openWriteInput(path string) (undump.Input, func(), error) {
	none := func() {}
	if path != "-" {
		st, err := os.Stat(path)
		if err != nil {
			return undump.Input{}, none, err
		}
		if st.Mode().IsRegular() {
			f, err := os.Open(path)
			if err != nil {
				return undump.Input{}, none, err
			}
			return undump.Input{Name: path, R: f, Size: st.Size()}, func() { f.Close() }, nil
		}
	}
	src := io.Reader(os.Stdin)
	name := "standard input"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return undump.Input{}, none, err
		}
		defer f.Close()
		src, name = f, path
	}
	fsys := vfs.Default
	dir, err := fsys.MkdirTemp("", "sstabletool-write-")
	if err != nil {
		return undump.Input{}, none, err
	}
	cleanup := func() { fsys.RemoveAll(dir) }
	spool := filepath.Join(dir, "input.json")
	w, err := fsys.Create(spool, 0o600)
	if err == nil {
		_, err = io.Copy(w, src)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		cleanup()
		return undump.Input{}, none, fmt.Errorf("copying %s to a temporary file: %w", name, err)
	}
	f, err := os.Open(spool)
	if err != nil {
		cleanup()
		return undump.Input{}, none, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		cleanup()
		return undump.Input{}, none, err
	}
	return undump.Input{Name: name, R: f, Size: st.Size()}, func() { f.Close(); cleanup() }, nil
}
