package trie

import (
	"fmt"
	"slices"
	"strings"
)

// SpanKind says what part of a node a Span covers.
type SpanKind uint8

const (
	// SpanHeader is the node's first byte (type in the high nibble,
	// payload bits or pointer bits in the low one) and, for sparse and
	// dense nodes, the child count or the first transition and range.
	SpanHeader SpanKind = iota
	// SpanTransitions are the bytes that lead to children: a single
	// node's transition byte, a sparse node's sorted list.
	SpanTransitions
	// SpanPointers are the child pointers (distances back from the node).
	SpanPointers
	// SpanPayload is the payload after the node, as the caller sizes it.
	SpanPayload
)

// Span is one labelled part of a trie node.
type Span struct {
	Off   int64
	Len   int
	Kind  SpanKind
	Node  int64 // position of the node the span belongs to
	Label string
}

// End is the offset just past the span.
func (s Span) End() int64 { return s.Off + int64(s.Len) }

// PayloadSpans labels the payload of a node with payload bits set: the
// spans it returns must lie at or after n.PayloadPos().
type PayloadSpans func(n *Node) ([]Span, error)

// Spans walks every node reachable from the root and labels the parts of
// those that lie in [from, to): header, transitions, child pointers and
// the payload (labelled by payload, which may be nil for a plain payload
// span of unknown meaning: then nothing is labelled after the node). The
// spans come sorted by offset.
//
// Children always lie before their parent, so subtrees of nodes well
// before from are not visited; a walk is bounded by the file's size in
// nodes.
func (r *Reader) Spans(from, to int64, payload PayloadSpans) ([]Span, error) {
	var out []Span
	// A node that starts before from may reach into the range (its
	// pointers, its payload): nodes are walked from a node and payload's
	// largest size earlier.
	lo := from - window
	// Each node of a trie has one parent, so a walk visits it once; a
	// damaged file whose pointers share nodes is cut off at one visit per
	// byte.
	visits := int64(0)
	stack := []int64{r.root}
	for len(stack) > 0 {
		pos := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if pos < lo {
			continue
		}
		if visits++; visits > r.size {
			return out, r.corrupt(pos, "a trie of at most one node per byte", nil)
		}
		n, err := r.Node(pos)
		if err != nil {
			return out, err
		}
		if pos < to {
			spans, err := nodeSpans(&n)
			if err != nil {
				return out, r.own(err)
			}
			out = append(out, spans...)
			if n.HasPayload() && payload != nil {
				ps, err := payload(&n)
				if err != nil {
					return out, r.own(err)
				}
				out = append(out, ps...)
			}
		}
		for i := 0; i < n.TransitionRange(); i++ {
			c, ok, err := n.Child(i)
			if err != nil {
				return out, r.own(err)
			}
			if ok && c >= lo {
				stack = append(stack, c)
			}
		}
	}
	out = slices.DeleteFunc(out, func(s Span) bool { return s.End() <= from || s.Off >= to })
	slices.SortFunc(out, func(a, b Span) int {
		if a.Off != b.Off {
			if a.Off < b.Off {
				return -1
			}
			return 1
		}
		return 0
	})
	return out, nil
}

// transitionText shows a transition byte as a character when printable.
func transitionText(c int) string {
	if c >= 0x21 && c < 0x7f {
		return fmt.Sprintf("%#02x '%c'", c, rune(c))
	}
	return fmt.Sprintf("%#02x", c)
}

// nodeSpans labels the node's own bytes (not its payload).
func nodeSpans(n *Node) ([]Span, error) {
	var out []Span
	add := func(off int64, l int, k SpanKind, label string) {
		if l > 0 {
			out = append(out, Span{Off: off, Len: l, Kind: k, Node: n.Pos, Label: label})
		}
	}
	payload := "no payload"
	if n.HasPayload() {
		payload = fmt.Sprintf("payload bits %d", n.Flags)
	}
	children := func() string {
		var b strings.Builder
		shown := 0
		for i := 0; i < n.TransitionRange(); i++ {
			c, ok, err := n.Child(i)
			if err != nil || !ok {
				continue
			}
			if shown == 8 {
				fmt.Fprintf(&b, ", …")
				break
			}
			if shown > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s→@%d (back %d)", transitionText(n.TransitionByte(i)), c, n.Pos-c)
			shown++
		}
		return b.String()
	}
	p := n.Pos
	switch n.Type {
	case PayloadOnly:
		add(p, 1, SpanHeader, fmt.Sprintf("%s node, %s (a leaf)", n.Type, payload))
	case SingleNoPayload4:
		add(p, 1, SpanHeader, fmt.Sprintf("%s node, pointer in the low nibble: %s", n.Type, children()))
		add(p+1, 1, SpanTransitions, "transition "+transitionText(n.TransitionByte(0)))
	case SingleNoPayload12:
		add(p, 1, SpanHeader, fmt.Sprintf("%s node, pointer's high 4 bits in the low nibble", n.Type))
		add(p+1, 1, SpanPointers, "pointer's low 8 bits: "+children())
		add(p+2, 1, SpanTransitions, "transition "+transitionText(n.TransitionByte(0)))
	case Single8, Single16:
		add(p, 1, SpanHeader, fmt.Sprintf("%s node, %s", n.Type, payload))
		add(p+1, 1, SpanTransitions, "transition "+transitionText(n.TransitionByte(0)))
		add(p+2, n.Size()-2, SpanPointers, fmt.Sprintf("%d-bit pointer: %s", n.Type.PointerBits(), children()))
	case Sparse8, Sparse12, Sparse16, Sparse24, Sparse40:
		cnt := n.TransitionRange()
		add(p, 2, SpanHeader, fmt.Sprintf("%s node, %s, %d children", n.Type, payload, cnt))
		var ts []string
		for i := 0; i < cnt && i < 16; i++ {
			ts = append(ts, transitionText(n.TransitionByte(i)))
		}
		if cnt > 16 {
			ts = append(ts, "…")
		}
		add(p+2, cnt, SpanTransitions, fmt.Sprintf("%d transitions: %s", cnt, strings.Join(ts, " ")))
		add(p+2+int64(cnt), n.Size()-2-cnt, SpanPointers, fmt.Sprintf("%d %d-bit pointers: %s", cnt, n.Type.PointerBits(), children()))
	default: // dense
		cnt := n.TransitionRange()
		add(p, 3, SpanHeader, fmt.Sprintf("%s node, %s, transitions %s..%s", n.Type, payload,
			transitionText(n.TransitionByte(0)), transitionText(n.TransitionByte(cnt-1))))
		add(p+3, n.Size()-3, SpanPointers, fmt.Sprintf("%d %d-bit pointers (0 = no child): %s", cnt, n.Type.PointerBits(), children()))
	}
	return out, nil
}
