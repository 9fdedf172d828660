package main

import (
	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/internal/inspect"
)

var (
	schemaFlag = &cli.StringFlag{Name: "schema", Usage: "a CQL schema `FILE`: cqlsh DESCRIBE SCHEMA, DESCRIBE KEYSPACE or DESCRIBE TABLE output; " +
		"names the key columns and cross-checks the types. The table is the one the sstable's directory names " +
		"(<keyspace>/<table>-<id>/), or --table"}
	tableFlag = &cli.StringFlag{Name: "table", Usage: "with --schema: the table (or view) to use, as `KEYSPACE.TABLE` or TABLE, when the sstable's directory does not name it"}
)

// loadSchema reads --schema and resolves --table; nil without --schema.
// Its errors are bad usage: no sstable can be checked against a file that
// cannot be read.
func loadSchema(c *cli.Context) (*inspect.SchemaFile, error) {
	path := c.String("schema")
	if path == "" {
		if c.IsSet("table") {
			return nil, usageError("--table needs --schema FILE")
		}
		return nil, nil
	}
	sf, err := inspect.ReadSchemaFile(path, c.String("table"))
	if err != nil {
		return nil, usageError("%v", err)
	}
	return sf, nil
}
