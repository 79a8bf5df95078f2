package docs

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLinks: every relative link of every Markdown file in the repository
// (markdownFiles) reaches a file or folder of it, and every #anchor, in
// the same document or another, is one of the target's headings under
// GitHub's rules (or an HTML id). Links to the web are not followed;
// links inside code are not links.
func TestLinks(t *testing.T) {
	files, err := markdownFiles(repoRoot)
	require.NoError(t, err)
	require.Contains(t, files, "README.md", "the repository's Markdown files, from %s", repoRoot)
	for _, p := range checkLinks(repoRoot, files) {
		t.Error(p)
	}
}

// TestOrganisation: no document a reader starts from (organisationFiles)
// speaks of how the work was organised (organisationRules): it says what
// is, and git and the changelog say how it came to be.
func TestOrganisation(t *testing.T) {
	files, err := markdownFiles(repoRoot)
	require.NoError(t, err)
	for _, f := range files {
		if !organisationFiles(f) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(repoRoot, f))
		require.NoError(t, err)
		for _, p := range organisationProblems(string(b)) {
			t.Errorf("%s:%s", f, p)
		}
	}
}

// webRe are the links not followed: to the web, and mail.
var webRe = regexp.MustCompile(`(?i)^(https?|mailto):`)

// schemeRe is a link with a scheme: not a relative link.
var schemeRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// checkLinks checks the links of files (slash-separated, from root) and
// returns what is wrong, one "file:line: …" each.
func checkLinks(root string, files []string) []string {
	docs := map[string]*doc{}
	load := func(rel string) (*doc, error) {
		if d, ok := docs[rel]; ok {
			return d, nil
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		d := parse(string(b))
		docs[rel] = &d
		return &d, nil
	}
	var problems []string
	for _, f := range files {
		d, err := load(f)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", f, err))
			continue
		}
		for _, l := range d.links {
			if msg := checkLink(root, f, l.target, load); msg != "" {
				problems = append(problems, fmt.Sprintf("%s:%d: %s: %s", f, l.line, l.target, msg))
			}
		}
	}
	return problems
}

// checkLink is what is wrong with the link target in the document from
// ("" if nothing).
func checkLink(root, from, target string, load func(string) (*doc, error)) string {
	if webRe.MatchString(target) {
		return ""
	}
	if schemeRe.MatchString(target) {
		return "not a relative link"
	}
	p, frag, _ := strings.Cut(target, "#")
	p, err := url.PathUnescape(p)
	if err != nil {
		return "bad escape: " + err.Error()
	}
	if frag, err = url.PathUnescape(frag); err != nil {
		return "bad escape: " + err.Error()
	}
	if strings.HasPrefix(p, "/") {
		return "an absolute path: links are relative to the document"
	}
	rel := from
	if p != "" {
		rel = path.Join(path.Dir(from), p)
		if rel == ".." || strings.HasPrefix(rel, "../") {
			return "outside the repository"
		}
		fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return "no such file or folder"
		}
		if fi.IsDir() || !strings.HasSuffix(rel, ".md") {
			return "" // a folder, or a file whose anchors are GitHub's own (#L10)
		}
	}
	if frag == "" {
		return ""
	}
	d, err := load(rel)
	if err != nil {
		return err.Error()
	}
	if !d.anchors[frag] {
		return fmt.Sprintf("no heading of %s has the anchor #%s", rel, frag)
	}
	return ""
}

// organisationProblems are the lines of a document that break an
// organisationRule, one "line: rule: text" each.
func organisationProblems(text string) []string {
	var out []string
	for i, line := range strings.Split(text, "\n") {
		for _, r := range organisationRules {
			for _, m := range r.re.FindAllStringIndex(line, -1) {
				if !allowed(r.allow, line, m) {
					out = append(out, fmt.Sprintf("%d: %q %s: %s", i+1, line[m[0]:m[1]], r.why, strings.TrimSpace(line)))
				}
			}
		}
	}
	return out
}

// allowed reports whether the match m of line lies inside a span allow
// matches.
func allowed(allow *regexp.Regexp, line string, m []int) bool {
	if allow == nil {
		return false
	}
	for _, a := range allow.FindAllStringIndex(line, -1) {
		if a[0] <= m[0] && m[1] <= a[1] {
			return true
		}
	}
	return false
}

func TestLinkParse(t *testing.T) {
	text := strings.Join([]string{
		"# Title",
		"See [the guide](guides/simulate.md#the-spread) and ![a picture](img/epoch.png \"one epoch\").",
		"Not a link: `[x](nowhere.md)`, nor ``[y](nowhere.md)``.",
		"```sh",
		"[z](inside-a-fence.md)",
		"# not a heading",
		"```",
		"~~~",
		"[w](inside-a-tilde-fence.md)",
		"~~~",
		"[ref]: ../REPRODUCE.md#an-index",
		`<a href="design.md">design</a> <img src="img/x.svg">`,
		"## Title",
		"Setext heading",
		"--------------",
		"### `--c` and _p_ (the layout)",
		`<a id="custom-anchor"></a>`,
		"[nested [brackets]](other.md)",
	}, "\n")
	d := parse(text)
	var targets []string
	for _, l := range d.links {
		targets = append(targets, fmt.Sprintf("%d %s", l.line, l.target))
	}
	assert.Equal(t, []string{
		"2 guides/simulate.md#the-spread", "2 img/epoch.png",
		"11 ../REPRODUCE.md#an-index",
		"12 design.md", "12 img/x.svg",
		"18 other.md",
	}, targets)
	for _, a := range []string{"title", "title-1", "setext-heading", "--c-and-p-the-layout", "custom-anchor"} {
		assert.True(t, d.anchors[a], "anchor %s of %v", a, d.anchors)
	}
	assert.False(t, d.anchors["not-a-heading"])
}

func TestLinkCheck(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	write("README.md", strings.Join([]string{
		"# Tierflow",
		"[ok](docs/guide.md) [ok](docs/guide.md#the-spread) [ok](#tierflow) [ok](docs/) [ok](main.go#L3)",
		"[ok](https://example.com/x.md#nothing) [ok](mailto:a@example.com) [ok](docs/a%20b.md)",
		"[bad](docs/missing.md) [bad](docs/guide.md#no-such) [bad](#nothing) [bad](/docs/guide.md)",
		"[bad](../outside.md) [bad](ftp://example.com/x)",
	}, "\n"))
	write("docs/guide.md", "# Guide\n\n## The spread\n\n[ok](../README.md#tierflow) [bad](../README.md#guide)\n")
	write("docs/a b.md", "# A b\n")
	write("main.go", "package main\n")
	got := checkLinks(root, []string{"README.md", "docs/guide.md"})
	assert.Equal(t, []string{
		"README.md:4: docs/missing.md: no such file or folder",
		"README.md:4: docs/guide.md#no-such: no heading of docs/guide.md has the anchor #no-such",
		"README.md:4: #nothing: no heading of README.md has the anchor #nothing",
		"README.md:4: /docs/guide.md: an absolute path: links are relative to the document",
		"README.md:5: ../outside.md: outside the repository",
		"README.md:5: ftp://example.com/x: not a relative link",
		"docs/guide.md:5: ../README.md#guide: no heading of README.md has the anchor #guide",
	}, got)
}

func TestOrganisationRules(t *testing.T) {
	for _, tc := range []struct {
		line string
		bad  bool
	}{
		{"The ordering was chosen in issue 12.", true},
		{"See issue #47 for the plan.", true},
		{"Issues 3 and 4 are open.", true},
		{"As [issue 1234](https://github.com/pytorch/pytorch/issues/1234) describes, …", false},
		{"PBG's behaviour (https://github.com/facebookresearch/PyTorch-BigGraph/issues/12) …", false},
		{"In this session we measured …", true},
		{"A helper wrote the guide.", true},
		{"The helpers split the work.", true},
		{"clitest holds test helpers for the commands.", false},
		{"A helper function parses the flags.", false},
		{"Check out a worktree first.", true},
		{"The work directory holds the partitions.", false},
		{"The issue is that the buffer is too small.", false},
		{"Sessions of etcd keep a trainer's lease.", false},
		{"We changed the default to 4.", true},
		{"A checkpoint is written under a temporary name and renamed.", false},
	} {
		t.Run(tc.line, func(t *testing.T) {
			assert.Equal(t, tc.bad, len(organisationProblems(tc.line)) > 0, "%v", organisationProblems(tc.line))
		})
	}
}

func TestSlug(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"Simulate and sweep", "simulate-and-sweep"},
		{"The spread", "the-spread"},
		{"What `--c` means", "what---c-means"},
		{"realrun export (GNN work directory)", "realrun-export-gnn-work-directory"},
		{"p=32, c=8: swaps & bytes!", "p32-c8-swaps--bytes"},
		{"snake_case stays", "snake_case-stays"},
		{"Ünïcode Größe", "ünïcode-größe"},
		{"Fractions ½ and x² go", "fractions--and-x-go"},
		{"2026-11-27: measured", "2026-11-27-measured"},
		{"Dots.and/slashes", "dotsandslashes"},
		{"  two  spaces ", "--two--spaces-"},
		{"Emoji 🚀 launch", "emoji--launch"},
		{"", ""},
	} {
		t.Run(tc.text, func(t *testing.T) { assert.Equal(t, tc.want, slug(tc.text)) })
	}
}

func TestSlugDuplicates(t *testing.T) {
	s := newSlugger()
	var got []string
	for _, h := range []string{"Usage", "Usage", "Usage-1", "Usage", "Other", "usage"} {
		got = append(got, s.slug(h))
	}
	assert.Equal(t, []string{"usage", "usage-1", "usage-1-1", "usage-2", "other", "usage-3"}, got)
}

func TestSlugHeadingText(t *testing.T) {
	for _, tc := range []struct{ md, want string }{
		{"`--c` and `--p`", "--c and --p"},
		{"[The guide](guide.md) and ![icon](i.png)", "The guide and icon"},
		{"**Bold** and *emphasis* and _under_ and __strong__", "Bold and emphasis and under and strong"},
		{"snake_case and `code_span`", "snake_case and code_span"},
		{"Tom &amp; Jerry <sup>2</sup>", "Tom & Jerry 2"},
	} {
		t.Run(tc.md, func(t *testing.T) { assert.Equal(t, tc.want, headingText(tc.md)) })
	}
}

// FuzzSlug: a slug is a valid anchor — no spaces, nothing but word
// characters and '-' — and slugging it again changes nothing.
func FuzzSlug(f *testing.F) {
	for _, s := range []string{"Simulate and sweep", "What `--c` means", "Ünïcode ½", "a_b-c d", "\t\n"} {
		f.Add(s)
	}
	word := regexp.MustCompile(`^[\p{L}\p{M}\p{Nd}\p{Nl}\p{Pc}-]*$`)
	f.Fuzz(func(t *testing.T, text string) {
		s := slug(text)
		if !word.MatchString(s) {
			t.Fatalf("slug(%q) = %q: not only word characters and '-'", text, s)
		}
		if again := slug(s); again != s {
			t.Fatalf("slug(%q) = %q, but slug(%q) = %q", text, s, s, again)
		}
	})
}
