package cqltype

import (
	"fmt"
	"slices"
)

// The definitions below build a Schema from a schema kept as data rather
// than as CQL statements (a node's system_schema tables): the types are
// CQL text there too, and resolve against the schema's user types as the
// parser resolves them.

// NewSchema returns an empty schema, to be filled with DefineType and
// AddTable.
func NewSchema() *Schema {
	return &Schema{Types: map[string]*Type{}, Unresolved: map[string]error{}}
}

// DefineType defines the user type keyspace.name, its fields' types given
// as CQL text (system_schema.types' field_types). The user types a field
// names must be defined first; a type defined twice is an error.
func (s *Schema) DefineType(keyspace, name string, fieldNames, fieldTypes []string) error {
	if len(fieldNames) != len(fieldTypes) {
		return fmt.Errorf("type %s: %d field names and %d field types", qualify(keyspace, name), len(fieldNames), len(fieldTypes))
	}
	if _, ok := s.Types[qualify(keyspace, name)]; ok {
		return fmt.Errorf("type %s is defined twice", qualify(keyspace, name))
	}
	ut := &Type{Kind: UDT, impl: "UserType", Keyspace: keyspace, Name: name, FieldNames: slices.Clone(fieldNames)}
	for i, ft := range fieldTypes {
		t, err := s.ColumnType(keyspace, ft)
		if err != nil {
			return fmt.Errorf("type %s, field %s: %w", qualify(keyspace, name), fieldNames[i], err)
		}
		// A field's value is stored whole, inside the UDT's: frozen.
		ut.Params = append(ut.Params, freeze(t))
	}
	ut.setClass(false)
	s.Types[qualify(keyspace, name)] = ut
	return nil
}

// ColumnType parses a column's type given as CQL text ("int",
// "frozen<address>", "map<text, frozen<list<int>>>") in keyspace: user
// types resolve among the schema's, keeping each reference's freezing.
func (s *Schema) ColumnType(keyspace, cql string) (*Type, error) {
	lx := newLexer(cql)
	t, err := parseCQLType(lx, 0)
	if err != nil {
		return nil, err
	}
	if tok := lx.next(); tok.kind != tokEOF {
		return nil, lx.errorf(tok, "expected the end of the type, found %q", tok.text)
	}
	if t, err = s.resolve(lx, token{}, t, keyspace); err != nil {
		return nil, err
	}
	t.setClass(false)
	return t, nil
}

// AddTable adds a table (or view) built from data: its key and clustering
// columns must be among its columns, whose types are already resolved
// (ColumnType). Descending clustering columns get reversed types, as the
// parser gives them.
func (s *Schema) AddTable(ts *TableSchema) error {
	if err := ts.complete(ts.Name()); err != nil {
		return err
	}
	s.Tables = append(s.Tables, ts)
	return nil
}
