package docs

import (
	"html"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// What the document tests read, in one place: which Markdown files (every
// one in the repository but these folders), and the phrases about how the
// work was organised that no document may hold (organisationRules).

// repoRoot is the repository, seen from this package's directory.
const repoRoot = ".."

// skipDirs are folders whose Markdown is not ours to check: vendored and
// third-party code, test inputs, build outputs.
var skipDirs = []string{"testdata", "vendor", "third_party", "node_modules", "bin", "gpu-bundle"}

// organisationFiles reports whether the organisation test reads the
// document at rel (slash-separated, from the repository root): the
// documents a reader starts from, README.md, REPRODUCE.md and docs/.
func organisationFiles(rel string) bool {
	return rel == "README.md" || rel == "REPRODUCE.md" || strings.HasPrefix(rel, "docs/")
}

// organisationRule is a phrase about how the work was organised: a line
// matching re is refused unless each match lies inside a span allow
// matches on the same line.
type organisationRule struct {
	re, allow *regexp.Regexp
	why       string
}

// organisationRules say what a document is, not how it came to be.
var organisationRules = []organisationRule{
	{re: regexp.MustCompile(`(?i)\bissues? #?\d+\b`), why: "names an issue of the work's tracker; say what is",
		// An issue of another project, by its link: [issue 12](https://…).
		allow: regexp.MustCompile(`(?i)\[[^\]]*\]\(https?://[^)]*\)|https?://\S+`)},
	{re: regexp.MustCompile(`(?i)\bthis session\b`), why: "speaks of the session that wrote it"},
	{re: regexp.MustCompile(`(?i)\bhelpers?\b`), why: "speaks of who did the work",
		// Code: a test helper, a helper function or package.
		allow: regexp.MustCompile(`(?i)\b(test|testing)\s+helpers?\b|\bhelpers?\s+(functions?|packages?|methods?|programs?|scripts?|binar(y|ies)|process(es)?|goroutines?|types?)\b`)},
	{re: regexp.MustCompile(`(?i)\bworktrees?\b`), why: "speaks of how the work was checked out"},
	{re: regexp.MustCompile(`(?i)\bwe changed\b`), why: "tells the document's history; say what is"},
}

// markdownFiles are the repository's Markdown files, slash-separated from
// root: the ones git tracks or would add (git ls-files), or, outside a
// git checkout, every one under root; never under skipDirs.
func markdownFiles(root string) ([]string, error) {
	var files []string
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "--", "*.md").Output()
	if err == nil {
		for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if f != "" {
				if _, err := os.Stat(filepath.Join(root, f)); err == nil { // not deleted in the work tree
					files = append(files, f)
				}
			}
		}
	} else {
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && p != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(p, ".md") {
				rel, err := filepath.Rel(root, p)
				if err != nil {
					return err
				}
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	files = slices.DeleteFunc(files, func(f string) bool {
		for _, dir := range strings.Split(path.Dir(f), "/") {
			if slices.Contains(skipDirs, dir) {
				return true
			}
		}
		return false
	})
	slices.Sort(files)
	return files, nil
}

// doc is a Markdown document as the tests see it: its anchors and its
// links, each with its line.
type doc struct {
	anchors map[string]bool
	links   []link
	// prose are its lines outside fenced code blocks, with inline code
	// blanked out, by line number (1-based); all are its lines.
	prose, all []string
}

type link struct {
	line   int
	target string
}

var (
	fenceRe   = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})(.*)$")
	atxRe     = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	setextRe  = regexp.MustCompile(`^ {0,3}(=+|-+)[ \t]*$`)
	listRe    = regexp.MustCompile(`^\s*([-*+]|\d+[.)])\s`)
	inlineRe  = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)`)
	refDefRe  = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)`)
	htmlRefRe = regexp.MustCompile(`(?i)<(?:a|img|source)\b[^>]*?\b(?:href|src)\s*=\s*"([^"]*)"`)
	htmlIDRe  = regexp.MustCompile(`(?i)<[a-z][^>]*?\b(?:id|name)\s*=\s*"([^"]*)"`)
	codeRe    = regexp.MustCompile("(`+)(.+?)(`+)")
	tagRe     = regexp.MustCompile(`<[^>]*>`)
)

// parse reads a Markdown document: its headings' anchors (GitHub's
// slugs, a repeated one suffixed -1, -2, …) and HTML ids, and the targets
// of its links and images, neither inside fenced code blocks nor inside
// inline code.
func parse(text string) doc {
	d := doc{anchors: map[string]bool{}}
	s := newSlugger()
	var fence string // the open fence's marker, "" outside one
	prev := ""       // the previous prose line, for setext headings
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	d.all = lines
	d.prose = make([]string, len(lines))
	for i, line := range lines {
		if m := fenceRe.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "" && !(m[1][0] == '`' && strings.Contains(m[2], "`")):
				fence, prev = m[1], ""
				continue
			case fence != "" && m[1][0] == fence[0] && len(m[1]) >= len(fence) && strings.TrimSpace(m[2]) == "":
				fence = ""
				continue
			}
		}
		if fence != "" {
			continue
		}
		plain := blankCode(line)
		d.prose[i] = plain
		for _, m := range htmlIDRe.FindAllStringSubmatch(plain, -1) {
			d.anchors[m[1]] = true
		}
		switch m := atxRe.FindStringSubmatch(line); {
		case m != nil:
			d.anchors[s.slug(headingText(m[2]))] = true
			prev = ""
		case setextRe.MatchString(line) && prev != "":
			d.anchors[s.slug(headingText(prev))] = true
			prev = ""
		case strings.TrimSpace(line) == "" || listRe.MatchString(line) || strings.HasPrefix(strings.TrimSpace(line), "|") || strings.HasPrefix(line, "    ") || strings.HasPrefix(strings.TrimSpace(line), ">"):
			prev = ""
		default:
			prev = strings.TrimSpace(line)
		}
		for _, m := range inlineRe.FindAllStringSubmatch(plain, -1) {
			d.links = append(d.links, link{i + 1, strings.Trim(m[2], "<>")})
		}
		if m := refDefRe.FindStringSubmatch(plain); m != nil {
			d.links = append(d.links, link{i + 1, strings.Trim(m[1], "<>")})
		}
		for _, m := range htmlRefRe.FindAllStringSubmatch(plain, -1) {
			d.links = append(d.links, link{i + 1, m[1]})
		}
	}
	return d
}

// blankCode replaces inline code spans (`…`, or between runs of two or
// more backticks) with spaces.
func blankCode(line string) string {
	return codeRe.ReplaceAllStringFunc(line, func(m string) string {
		sub := codeRe.FindStringSubmatch(m)
		if sub[1] != sub[3] {
			return m
		}
		return strings.Repeat(" ", len(m))
	})
}

// headingText is what a heading's Markdown renders to, as GitHub slugs
// it: code spans keep their text, links and images keep their text, HTML
// tags and entities go, emphasis markers go (underscores inside words stay).
func headingText(md string) string {
	var b strings.Builder
	for rest := md; rest != ""; {
		loc := codeRe.FindStringSubmatchIndex(rest)
		if loc == nil || rest[loc[2]:loc[3]] != rest[loc[6]:loc[7]] {
			b.WriteString(inlineText(rest))
			break
		}
		b.WriteString(inlineText(rest[:loc[0]]))
		b.WriteString(strings.TrimSpace(rest[loc[4]:loc[5]]))
		rest = rest[loc[1]:]
	}
	return strings.TrimSpace(b.String())
}

var emphRe = regexp.MustCompile(`(^|[^\p{L}\p{N}_])_+|_+($|[^\p{L}\p{N}_])`)

// inlineText is Markdown outside code spans as text.
func inlineText(md string) string {
	md = inlineRe.ReplaceAllString(md, "$1")
	md = tagRe.ReplaceAllString(md, "")
	md = emphRe.ReplaceAllString(md, "$1$2")
	md = strings.NewReplacer("*", "", `\`, "").Replace(md)
	return html.UnescapeString(md)
}

// slugger gives headings GitHub's anchors: slug of the text, and for a
// slug already given, the first of slug-1, slug-2, … not given yet (the
// algorithm of github-slugger, which github.com follows).
type slugger struct{ seen map[string]int }

func newSlugger() *slugger { return &slugger{seen: map[string]int{}} }

func (s *slugger) slug(text string) string {
	base := slug(text)
	out := base
	for {
		if _, taken := s.seen[out]; !taken {
			break
		}
		s.seen[base]++
		out = base + "-" + strconv.Itoa(s.seen[base])
	}
	s.seen[out] = 0
	return out
}

// slug is GitHub's anchor of a heading whose text is text: lower case,
// every character dropped but word characters (letters, marks, decimal
// and letter numbers, connector punctuation such as '_'), '-' and spaces
// (Ruby's /[^\p{Word}\- ]/), each space a '-'.
func slug(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || unicode.In(r, unicode.L, unicode.M, unicode.Nd, unicode.Nl, unicode.Pc):
			b.WriteRune(r)
		}
	}
	return b.String()
}
