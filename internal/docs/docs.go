// Package docs reads the project's Markdown pages (README.md and docs/*.md)
// for the tests that keep them true: every relative link resolves, to a file
// and to a heading of it (this package's TestLinksResolve), and the examples
// pasted from real runs still run as shown (cmd/sstabletool's
// TestDocExamples, through Examples). It is test support: only tests import
// it.
package docs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/russross/blackfriday/v2"
)

// Pages lists README.md and every docs/*.md under the repository's root,
// README first, then the docs pages in name order.
func Pages(root string) ([]string, error) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	return append([]string{filepath.Join(root, "README.md")}, pages...), nil
}

// Page is what the link check needs of one Markdown page: the anchors its
// headings get on GitHub, and its links.
type Page struct {
	Path    string
	Anchors map[string]bool
	Links   []string // the destinations of links and images, as written
}

// Read parses a page as GitHub renders it (fenced code, tables, autolinks):
// links inside code are not links, and a heading's anchor is made of its
// text as shown (code spans without their backticks, links without their
// destinations).
func Read(path string) (*Page, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p := &Page{Path: path, Anchors: map[string]bool{}}
	seen := map[string]int{}
	md := blackfriday.New(blackfriday.WithExtensions(blackfriday.CommonExtensions &^ blackfriday.HeadingIDs))
	md.Parse(src).Walk(func(n *blackfriday.Node, entering bool) blackfriday.WalkStatus {
		if !entering {
			return blackfriday.GoToNext
		}
		switch n.Type {
		case blackfriday.Heading:
			slug := Slug(textOf(n))
			// GitHub numbers repeated headings: x, x-1, x-2.
			if k := seen[slug]; k > 0 {
				p.Anchors[fmt.Sprintf("%s-%d", slug, k)] = true
			} else {
				p.Anchors[slug] = true
			}
			seen[slug]++
			return blackfriday.SkipChildren
		case blackfriday.Link, blackfriday.Image:
			p.Links = append(p.Links, string(n.LinkData.Destination))
		}
		return blackfriday.GoToNext
	})
	// Anchors written as HTML (<a id="x"> or name="x").
	for _, attr := range []string{` id="`, ` name="`} {
		rest := src
		for {
			i := bytes.Index(rest, []byte(attr))
			if i < 0 {
				break
			}
			rest = rest[i+len(attr):]
			if j := bytes.IndexByte(rest, '"'); j > 0 {
				p.Anchors[string(rest[:j])] = true
			}
		}
	}
	return p, nil
}

// textOf is the text a heading shows: its text and code spans, in order.
func textOf(n *blackfriday.Node) string {
	var b strings.Builder
	n.Walk(func(c *blackfriday.Node, entering bool) blackfriday.WalkStatus {
		if entering && (c.Type == blackfriday.Text || c.Type == blackfriday.Code) {
			b.Write(c.Literal)
		}
		return blackfriday.GoToNext
	})
	return b.String()
}

// Slug is the anchor GitHub gives a heading's text: lower case, every
// character but letters, digits, marks, '_', '-' and ' ' dropped, each
// space a '-' (runs are not collapsed: "a — b" is "a--b").
func Slug(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || unicode.Is(unicode.Pc, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Broken lists the relative links of pages that do not resolve: the file
// (or directory) must exist, relative to the page, and a #fragment must be
// an anchor of the Markdown page it points into. Links with a scheme
// (https:, mailto:) are not checked.
func Broken(pages []string) ([]string, error) {
	read := map[string]*Page{}
	get := func(path string) (*Page, error) {
		if p, ok := read[path]; ok {
			return p, nil
		}
		p, err := Read(path)
		read[path] = p
		return p, err
	}
	var broken []string
	for _, path := range pages {
		p, err := get(path)
		if err != nil {
			return nil, err
		}
		for _, dest := range p.Links {
			if dest == "" || strings.Contains(strings.SplitN(dest, "/", 2)[0], ":") {
				continue
			}
			file, frag, _ := strings.Cut(dest, "#")
			target := path
			if file != "" {
				target = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
			}
			if _, err := os.Stat(target); err != nil {
				broken = append(broken, fmt.Sprintf("%s: %s: no such file", path, dest))
				continue
			}
			if frag == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				broken = append(broken, fmt.Sprintf("%s: %s: a #fragment into a file that is not Markdown", path, dest))
				continue
			}
			tp, err := get(target)
			if err != nil {
				return nil, err
			}
			if !tp.Anchors[frag] {
				broken = append(broken, fmt.Sprintf("%s: %s: %s has no heading #%s", path, dest, target, frag))
			}
		}
	}
	return broken, nil
}

// Example is a command pasted into a page's code block, with what it
// printed: the lines "$ " + Command, then Output.
type Example struct {
	Page    string
	Line    int      // the command's line in the page, from 1
	Command string   // the line without its "$ "
	Output  []string // the lines after it, up to the next "$ " line or the block's end
	Exit    int      // the code an "exit N" line of Output shows (the command ended "; echo exit $?"); 0 without one
}

// Examples lists the commands of path's fenced code blocks that start with
// prefix ("sstabletool"), in page order.
func Examples(path, prefix string) ([]Example, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(src), "\n")
	var out []Example
	inBlock := false
	var cur *Example
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			inBlock, cur = !inBlock, nil
			continue
		}
		if !inBlock {
			continue
		}
		if cmd, ok := strings.CutPrefix(l, "$ "); ok {
			cur = nil
			if strings.HasPrefix(cmd, prefix+" ") || cmd == prefix {
				out = append(out, Example{Page: path, Line: i + 1, Command: cmd})
				cur = &out[len(out)-1]
			}
			continue
		}
		if cur == nil {
			continue
		}
		cur.Output = append(cur.Output, l)
		if n, ok := strings.CutPrefix(l, "exit "); ok && len(n) == 1 && n[0] >= '0' && n[0] <= '9' {
			cur.Exit = int(n[0] - '0')
		}
	}
	return out, nil
}
