package experiments

import (
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/internal/runinfo"
	"github.com/tierflow/tierflow/plots"
)

// notesFS holds the per-experiment analyses ("What differs and why"):
// notes/NAME.md, or a note shared by several experiments (noteAlias).
//
//go:embed notes/*.md
var notesFS embed.FS

// noteSource is where NoteFor and NoteFiles read (tests swap it).
var noteSource fs.FS = notesFS

// noteAlias names the note of experiments that share one.
var noteAlias = map[string]string{
	"betty-fig10": "betty", "betty-fig11": "betty", "betty-fig12": "betty", "betty-fig13": "betty",
	"betty-fig16": "betty", "betty-table5": "betty", "betty-table7": "betty",
	"edge-micro-fig12": "edge-micro", "edge-micro-fig16": "edge-micro", "edge-micro-table7": "edge-micro",
	"pbg-table3": "pbg-tables", "pbg-table4": "pbg-tables",
	"quality-orderings-curve": "quality-orderings",
	"validate-extra":          "validate",
	"disk-drift":              "validate", "disk-bracket": "validate", "disk-pattern": "validate", "engine-drift": "validate",
	"models-pbg": "models-quality",
}

// NoteDir is where the note files live in the repository (their links are
// relative to it).
const NoteDir = "experiments/notes"

// Note is an experiment's analysis: its title (the note's first heading)
// and its body in Markdown, links relative to NoteDir.
type Note struct {
	File  string // base name in NoteDir
	Title string
	Body  string
}

// NoteFor returns the note of the experiment or results folder name.
func NoteFor(name string) (Note, bool) {
	base := name
	if a, ok := noteAlias[name]; ok {
		base = a
	}
	b, err := fs.ReadFile(noteSource, "notes/"+base+".md")
	if err != nil {
		return Note{}, false
	}
	s := string(b)
	n := Note{File: base + ".md", Body: s}
	if strings.HasPrefix(s, "# ") {
		first, rest, _ := strings.Cut(s, "\n")
		n.Title = strings.TrimSpace(strings.TrimPrefix(first, "# "))
		n.Body = strings.TrimLeft(rest, "\n")
	}
	return n, true
}

// NoteFiles lists the note files (base names), sorted.
func NoteFiles() []string {
	ents, _ := fs.ReadDir(noteSource, "notes")
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// Folder is a results folder written by a tool other than bin/reproduce's
// experiments (a script, a benchmark driver, a GPU bundle).
type Folder struct {
	Name    string
	Command string
	// OwnReadme: the tool writes README.md itself; the note goes at its
	// end (SpliceNote) rather than into a README of ours.
	OwnReadme bool
	// Summary is a Markdown file of the folder shown in its README.
	Summary string
}

// Folders are the results folders that no experiment of the registry
// writes.
var Folders = []Folder{
	{Name: "distributed",
		Command: "make reproduce-distributed", Summary: "distributed.md"},
	{Name: "gnn", Command: "make reproduce-gnn", OwnReadme: true},
	{Name: "gpu",
		Command: "`make gpu-bundle`, then `bash gpu-bundle/run.sh OUT` on a GPU machine, OUT copied to results/gpu/DIR"},
	{Name: "models-gpu",
		Command: "`make gpu-bundle`, then `bash gpu-bundle/models.sh OUT` on a GPU machine, OUT copied to results/models-gpu"},
	{Name: "scale",
		Command: "make reproduce-scale WORK=DIR (scripts/reproduce-scale.sh: `realrun calibrate`, then `realrun {CompareSim} {Device}` on two graphs larger than memory)"},
}

// LookupFolder returns the Folder named name.
func LookupFolder(name string) (Folder, bool) {
	for _, f := range Folders {
		if f.Name == name {
			return f, true
		}
	}
	return Folder{}, false
}

// makeTarget names the make target that reproduces an experiment where it
// is not the generic reproduce-NAME.
var makeTarget = map[string]string{
	"models-quality":    "make reproduce-models",
	"models-types":      "make reproduce-types",
	"models-pbg":        "make reproduce-models-pbg PBG_SRC=DIR",
	"quality-orderings": "make reproduce-quality-orderings",
	"betty-fig10":       "make reproduce-betty", "betty-fig11": "make reproduce-betty", "betty-fig12": "make reproduce-betty",
	"betty-fig13": "make reproduce-betty", "betty-fig16": "make reproduce-betty", "betty-table5": "make reproduce-betty",
	"betty-table7":     "make reproduce-betty",
	"edge-micro-fig12": "make reproduce-edge-micro", "edge-micro-fig16": "make reproduce-edge-micro",
	"edge-micro-table7": "make reproduce-edge-micro",
}

// CodeSpan is a command as Markdown: in backticks, unless it holds
// Markdown of its own (backticks already).
func CodeSpan(cmd string) string {
	if strings.Contains(cmd, "`") {
		return cmd
	}
	return "`" + cmd + "`"
}

// MakeCommand is the command that reproduces the experiment.
func MakeCommand(name string) string {
	if c, ok := makeTarget[name]; ok {
		return c
	}
	return "make reproduce-" + name
}

// Provenance says where a result came from.
type Provenance struct {
	Command string // the command that reproduces it
	Machine string
	Date    string
	Commit  string
	RunTime string
	// From says how the README itself was written.
	From string
}

// Readme is what results/NAME/README.md is made from.
type Readme struct {
	Result Result
	Prov   Provenance
	// Images are the folder's PNG files (each has an SVG beside it when
	// SVG is true); Files every other file of the folder but README.md.
	Images []Image
	Files  []string
	// Summary is a Markdown text shown under "Results" in place of the
	// table (folders that Folders lists).
	Summary string
}

// Image is one chart of a results folder.
type Image struct {
	File string // base name without extension
	Alt  string
	SVG  bool
}

// WriteReadme writes results/NAME/README.md: the title, how it was made
// (command, machine, date, commit, run time), the table with the paper's
// numbers beside ours and its notes, the images, the files, and the
// experiment's note as "What differs and why".
func WriteReadme(w io.Writer, rd Readme) error {
	r := rd.Result
	note, hasNote := NoteFor(r.Name)
	var b strings.Builder
	title := r.Name
	if hasNote && note.Title != "" {
		title += ": " + note.Title
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	if rd.Prov.From != "" {
		fmt.Fprintf(&b, "%s\n\n", rd.Prov.From)
	}
	b.WriteString("| | |\n| --- | --- |\n")
	row := func(k, v string) {
		if v == "" {
			v = "not recorded"
		}
		fmt.Fprintf(&b, "| %s | %s |\n", k, strings.ReplaceAll(v, "|", `\|`))
	}
	row("command", CodeSpan(rd.Prov.Command))
	row("machine", rd.Prov.Machine)
	row("date", rd.Prov.Date)
	row("commit", rd.Prov.Commit)
	row("run time", rd.Prov.RunTime)
	switch {
	case rd.Summary != "":
		b.WriteString("\n## Results\n\n")
		b.WriteString(demote(strings.TrimSpace(rd.Summary), 1))
		b.WriteString("\n")
	case len(r.Header) > 0:
		b.WriteString("\n## Results\n\n")
		if r.Title != "" {
			fmt.Fprintf(&b, "%s\n\n", r.Title)
		}
		if err := (plots.Table{Header: r.Header, Rows: r.Rows}).Markdown(&b); err != nil {
			return fmt.Errorf("%s: README table: %w", r.Name, err)
		}
		if len(r.Notes) > 0 {
			b.WriteString("\n")
			for _, n := range r.Notes {
				fmt.Fprintf(&b, "* %s\n", n)
			}
		}
	}
	if len(rd.Images) > 0 {
		b.WriteString("\n## Images\n\n")
		for _, im := range rd.Images {
			alt := strings.NewReplacer("[", "(", "]", ")", "\n", " ").Replace(im.Alt)
			fmt.Fprintf(&b, "![%s](%s.png)", alt, im.File)
			if im.SVG {
				fmt.Fprintf(&b, " ([SVG](%s.svg))", im.File)
			}
			b.WriteString("\n\n")
		}
	}
	if len(rd.Files) > 0 {
		if len(rd.Images) == 0 {
			b.WriteString("\n")
		}
		b.WriteString("## Files\n\n")
		for _, f := range rd.Files {
			fmt.Fprintf(&b, "* [%s](%s)\n", f, f)
		}
	}
	if hasNote {
		b.WriteString("\n")
		b.WriteString(NoteSection(note, "results/"+r.Name))
	}
	s := strings.TrimRight(b.String(), "\n") + "\n"
	_, err := io.WriteString(w, s)
	return err
}

// NoteSection is the note as the "What differs and why" section of a
// README in the repository folder dir: headings one level down, links
// rebased from NoteDir to dir.
func NoteSection(n Note, dir string) string {
	var b strings.Builder
	b.WriteString("## What differs and why\n\n")
	fmt.Fprintf(&b, "This section is [%s](%s); edit it there.\n\n", path.Join(NoteDir, n.File), rebase(n.File, NoteDir, dir))
	body := RebaseLinks(strings.TrimSpace(n.Body), NoteDir, dir)
	b.WriteString(demote(dropOwn(body), 1))
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// ownLine matches a note's lines that, in the README of their own folder,
// repeat what the README shows: its images and the pointer to its table.
var ownLine = regexp.MustCompile(`^(!\[[^\]]*\]\([^/)]+\.png\)|The table and its notes: \[[^\]]*\]\(README\.md\)\.)$`)

// dropOwn removes ownLine lines (and a blank line they leave doubled).
func dropOwn(md string) string {
	var out []string
	for _, ln := range strings.Split(md, "\n") {
		if ownLine.MatchString(ln) {
			continue
		}
		if ln == "" && len(out) > 0 && out[len(out)-1] == "" {
			continue
		}
		out = append(out, ln)
	}
	return strings.Join(out, "\n")
}

// readmeMarker starts the section SpliceNote replaces.
const readmeMarker = "\n## What differs and why\n"

// SpliceNote puts the note at the end of a README written by another tool,
// replacing the section it put there before.
func SpliceNote(readme string, n Note, dir string) string {
	if i := strings.Index(readme, readmeMarker); i >= 0 {
		readme = readme[:i]
	}
	return strings.TrimRight(readme, "\n") + "\n\n" + NoteSection(n, dir)
}

// demote moves every Markdown heading outside code fences by levels.
func demote(md string, levels int) string {
	lines := strings.Split(md, "\n")
	fence := false
	for i, ln := range lines {
		t := strings.TrimSpace(ln)
		if strings.HasPrefix(t, "```") {
			fence = !fence
			continue
		}
		if !fence && strings.HasPrefix(ln, "#") {
			j := strings.IndexFunc(ln, func(r rune) bool { return r != '#' })
			if j > 0 && j <= 6 && ln[j] == ' ' {
				lines[i] = strings.Repeat("#", levels) + ln
			}
		}
	}
	return strings.Join(lines, "\n")
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// RebaseLinks rewrites the relative links of md, written for a file in
// the repository folder from, for a file in folder to.
func RebaseLinks(md, from, to string) string {
	lines := strings.Split(md, "\n")
	fence := false
	for i, ln := range lines {
		if strings.HasPrefix(strings.TrimSpace(ln), "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		lines[i] = linkRE.ReplaceAllStringFunc(ln, func(m string) string {
			target := m[2 : len(m)-1]
			return "](" + rebase(target, from, to) + ")"
		})
	}
	return strings.Join(lines, "\n")
}

// rebase rewrites one link target; absolute URLs and anchors stay.
func rebase(target, from, to string) string {
	if target == "" || strings.HasPrefix(target, "#") || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return target
	}
	p, frag, _ := strings.Cut(target, "#")
	abs := path.Clean(path.Join(from, p))
	rel := relPath(to, abs)
	if frag != "" {
		rel += "#" + frag
	}
	return rel
}

// relPath is the slash path of target relative to the folder dir (both
// relative to the repository root).
func relPath(dir, target string) string {
	d := strings.Split(path.Clean(dir), "/")
	t := strings.Split(path.Clean(target), "/")
	if path.Clean(dir) == "." {
		d = nil
	}
	k := 0
	for k < len(d) && k < len(t)-1 && d[k] == t[k] {
		k++
	}
	parts := make([]string, 0, len(d)-k+len(t)-k)
	for range d[k:] {
		parts = append(parts, "..")
	}
	parts = append(parts, t[k:]...)
	if len(parts) == 0 {
		return "."
	}
	return strings.Join(parts, "/")
}

// ScanFolder lists a results folder: its charts (PNG files, with SVG
// when an SVG of the same name is there) and every other file but
// README.md, sorted by name.
func ScanFolder(dir string) ([]Image, []string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("results folder: %w", err)
	}
	have := map[string]bool{}
	for _, e := range ents {
		have[e.Name()] = true
	}
	var images []Image
	var files []string
	for _, e := range ents {
		n := e.Name()
		switch {
		case n == "README.md":
		case strings.HasSuffix(n, ".png"):
			base := strings.TrimSuffix(n, ".png")
			images = append(images, Image{File: base, Alt: base, SVG: have[base+".svg"]})
		case strings.HasSuffix(n, ".svg") && have[strings.TrimSuffix(n, ".svg")+".png"]:
		case e.IsDir():
			files = append(files, n+"/")
		default:
			files = append(files, n)
		}
	}
	return images, files, nil
}

// LiveProvenance is the provenance of a run that has just finished on
// this machine: the binary's commit, the machine from /proc, the date it
// started (UTC) and how long it took.
func LiveProvenance(command string, start time.Time, took time.Duration) Provenance {
	return Provenance{
		Command: command,
		Machine: runinfo.Machine(),
		Date:    start.UTC().Format("2006-01-02 15:04 UTC"),
		Commit:  runinfo.BuildCommit(),
		RunTime: formatDuration(took),
		From:    "Written by the command below when it ran; the run's own record.",
	}
}

func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%.1f min", d.Minutes())
}

// CommittedProvenance is the provenance of the files committed in dir
// (the repository's folder root/rel): the commit and date of the last
// commit that changed them, README.md aside, from git log ("unknown"
// outside a checkout).
func CommittedProvenance(root, rel, command string) Provenance {
	p := Provenance{Command: command, Commit: "unknown", Date: "unknown",
		From: "Written by `bin/reproduce {ReadmeOnly}` (`make reproduce-readmes`) from the files of this folder as committed; commit and date are those of the last commit that changed them."}
	cmd := exec.Command("git", "-C", root, "log", "-1", "--format=%h%x00%cd", "--abbrev=12", "--date=format-local:%Y-%m-%d %H:%M UTC",
		"--", rel, ":(exclude)"+path.Join(rel, "README.md"))
	cmd.Env = append(os.Environ(), "TZ=UTC")
	out, err := cmd.Output()
	if err == nil {
		if c, d, ok := strings.Cut(strings.TrimSpace(string(out)), "\x00"); ok {
			p.Commit, p.Date = c, d
		}
	}
	return p
}

// machineWords mark notes that say which machine ran them.
var machineWords = regexp.MustCompile(`(?i)\b(cores?|cpus?|epyc|xeon|h100|h200|a100|this machine)\b`)

// RecordedMachine is the machine entry of a README written from committed
// files: simulated experiments need none; otherwise the notes say it or
// nothing does.
func RecordedMachine(simulated bool, texts ...string) string {
	if simulated {
		return "any: simulated, the numbers do not depend on the machine"
	}
	for _, t := range texts {
		if machineWords.MatchString(t) {
			return "as recorded in the notes"
		}
	}
	return "not recorded"
}

var runTimeRE = regexp.MustCompile(`(?i)run time of the whole experiment: ([0-9.]+ ?(?:min|s|h|minutes|seconds))`)

// RecordedRunTime is the run time the notes give, or "not recorded".
func RecordedRunTime(texts ...string) string {
	for _, t := range texts {
		if m := runTimeRE.FindStringSubmatch(t); m != nil {
			return m[1]
		}
	}
	return "not recorded"
}

// WriteFolderReadme writes dir/README.md for one of Folders (dir is the
// repository folder results/NAME as seen from here). A folder whose tool
// writes its own README gets the note spliced into it.
func WriteFolderReadme(dir string, f Folder, p Provenance) error {
	readme := filepath.Join(dir, "README.md")
	note, hasNote := NoteFor(f.Name)
	if f.OwnReadme {
		b, err := os.ReadFile(readme)
		if err != nil {
			return fmt.Errorf("%s: %w (its own tool writes it: %s)", f.Name, err, f.Command)
		}
		if !hasNote {
			return nil
		}
		s := SpliceNote(string(b), note, "results/"+f.Name)
		return atomicfile.WriteBytes(readme, []byte(s))
	}
	images, files, err := ScanFolder(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Name, err)
	}
	rd := Readme{Result: Result{Name: f.Name}, Prov: p, Images: images, Files: files}
	if f.Summary != "" {
		b, err := os.ReadFile(filepath.Join(dir, f.Summary))
		if err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
		rd.Summary = string(b)
	}
	return atomicfile.Write(readme, func(w io.Writer) error { return WriteReadme(w, rd) })
}
