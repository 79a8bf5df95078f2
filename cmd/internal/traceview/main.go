// Command traceview opens trace files in a trace viewer (speedscope's static
// build) in headless Chromium, driven over the DevTools protocol, fails on
// any error or warning the viewer reports, and takes a screenshot: make
// check-trace runs it.
package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	viewer := flag.String("viewer", "", "speedscope's release folder (the one holding index.html)")
	name := flag.String("name", "speedscope", "the viewer's name in what this prints")
	chromium := flag.String("chromium", "chromium", "the Chromium binary")
	timeout := flag.Duration("timeout", 90*time.Second, "how long one trace may take to load")
	shotTrace := flag.String("screenshot-trace", "", "the trace to take a screenshot of (one of the files)")
	shot := flag.String("screenshot", "", "write the screenshot to this PNG file")
	thread := flag.String("thread", "", "with --screenshot: show the first thread whose name holds this")
	filter := flag.String("list", "", "with --screenshot: open the thread list filtered by this")
	size := flag.String("size", "1600x1000", "window size, WIDTHxHEIGHT")
	crop := flag.Int("crop", 0, "with --screenshot: keep only its top N pixels (0: all)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: traceview --viewer DIR [flags] TRACE.json ...")
		flag.PrintDefaults()
	}
	flag.Parse()
	var w, h int
	if _, err := fmt.Sscanf(*size, "%dx%d", &w, &h); err != nil || w <= 0 || h <= 0 {
		fatal(fmt.Errorf("--size %q: want WIDTHxHEIGHT", *size))
	}
	if *viewer == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if _, err := os.Stat(filepath.Join(*viewer, "index.html")); err != nil {
		fatal(fmt.Errorf("--viewer: %w", err))
	}
	traces := flag.Args()

	// One server for the viewer (/) and the traces (/trace/N/NAME): the
	// viewer fetches them from its own origin.
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(*viewer)))
	for i, t := range traces {
		mux.HandleFunc(traceURLPath(i, t), func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, t) })
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	b, err := startBrowser(*chromium, w, h)
	if err != nil {
		fatal(err)
	}
	defer b.close()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-stop
		interrupted.Store(true)
		b.close() // Chromium and its profile folder go with this process
		fmt.Fprintln(os.Stderr, "traceview: interrupted")
		os.Exit(1)
	}()

	failed := false
	for i, t := range traces {
		traceURL := base + traceURLPath(i, t)
		pageURL := base + "/index.html#profileURL=" + url.QueryEscape(traceURL)
		want, countErr := threadsInFile(t)
		var png []byte
		takeShot := *shot != "" && t == *shotTrace
		res, err := b.open(pageURL, filepath.Base(t), *timeout, func(p *page, st state) error {
			if !takeShot {
				return nil
			}
			var err error
			png, err = screenshot(p, st, *thread, *filter, w, *crop)
			return err
		})
		switch {
		case err != nil:
			say("%s\t%s\tFAIL: %v\n", *name, t, err)
			failed = true
		case countErr != nil:
			say("%s\t%s\tFAIL: the viewer shows it, but it is not a trace-event file: %v\n", *name, t, countErr)
			failed = true
		case res.Total != want && !(want == 1 && res.Total == 0):
			say("%s\t%s\tFAIL: it shows %d threads; the file has %d with spans\n", *name, t, res.Total, want)
			failed = true
		default:
			say("%s\t%s\tok: shows all %d threads that hold spans; no error or warning\n", *name, t, want)
		}
		if takeShot && png != nil {
			if err := os.WriteFile(*shot, png, 0o644); err != nil {
				say("%s\t%s\tFAIL: %v\n", *name, t, err)
				failed = true
			} else {
				say("%s\t%s\tscreenshot %s (%d bytes)\n", *name, t, *shot, len(png))
			}
		}
	}
	if *shot != "" && !slices.Contains(traces, *shotTrace) {
		fmt.Fprintf(os.Stderr, "traceview: --screenshot-trace %q is not one of the files\n", *shotTrace)
		failed = true
	}
	if failed {
		b.close()
		srv.Close()
		os.Exit(1)
	}
}

// interrupted is set on SIGINT or SIGTERM: what fails from then on is the
// interruption's doing, not the viewer's, and goes unsaid.
var interrupted atomic.Bool

func say(format string, args ...any) {
	if !interrupted.Load() {
		fmt.Printf(format, args...)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "traceview:", err)
	os.Exit(1)
}

func traceURLPath(i int, path string) string {
	return fmt.Sprintf("/trace/%d/%s", i, url.PathEscape(filepath.Base(path)))
}

// threadsInFile counts the threads that hold complete or begin events: the
// profiles speedscope makes of a Chrome trace.
func threadsInFile(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var f struct {
		TraceEvents []struct {
			Ph  string          `json:"ph"`
			Pid json.RawMessage `json:"pid"`
			Tid json.RawMessage `json:"tid"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return 0, err
	}
	seen := map[string]bool{}
	for _, e := range f.TraceEvents {
		if e.Ph == "X" || e.Ph == "B" {
			seen[string(e.Pid)+":"+string(e.Tid)] = true
		}
	}
	return len(seen), nil
}

// state is what the page shows, read from its DOM.
type state struct {
	Title    string `json:"title"`
	Error    bool   `json:"error"`
	Landing  bool   `json:"landing"`
	Canvas   int    `json:"canvas"`
	Selected int    `json:"selected"`
	Total    int    `json:"total"`
	Profile  string `json:"profile"`
	Text     string `json:"text"`
}

// stateJS reads speedscope's page: the title it sets once a profile has
// imported, its error panel ("Something went wrong"), its landing page
// (what it shows when nothing imported), and the toolbar's "(k/N)" and
// profile name.
const stateJS = `(() => {
  const t = document.body ? document.body.innerText : "";
  const m = t.match(/\((\d+)\/(\d+)\)/);
  const line = m ? t.split("\n").find(l => l.includes(m[0])) : "";
  const profile = line ? line.replace(m[0], "").trim() : "";
  return {title: document.title, error: t.includes("Something went wrong"),
    landing: t.includes("Welcome to") || t.includes("Drag and drop"),
    canvas: document.querySelectorAll("canvas").length,
    selected: m ? +m[1] : 0, total: m ? +m[2] : 0, profile: m ? profile : "",
    text: t.slice(0, 400)};
})()`

// open loads pageURL in a fresh tab and waits until speedscope shows a
// profile (its title becomes "NAME - speedscope"), reports an error, or
// the timeout passes; once it shows one it calls then, and fails if it
// logged an error or a warning while importing.
func (b *browser) open(pageURL, name string, timeout time.Duration, then func(*page, state) error) (state, error) {
	p, err := b.newPage()
	if err != nil {
		return state{}, err
	}
	defer p.close()
	if _, err := p.call("Page.navigate", map[string]any{"url": pageURL}); err != nil {
		return state{}, err
	}
	deadline := time.Now().Add(timeout)
	var st state
	for {
		if msg := p.reported(); msg != "" {
			return st, errors.New(msg)
		}
		if err := p.eval(stateJS, &st); err != nil {
			return st, err
		}
		switch {
		case st.Error:
			return st, fmt.Errorf("speedscope shows %q%s", oneLine(st.Text), p.consoleNote())
		case st.Title == name+" - speedscope" && st.Canvas > 0 && !st.Landing:
			time.Sleep(500 * time.Millisecond) // let it draw
			if msg := p.reported(); msg != "" {
				return st, errors.New(msg)
			}
			if err := then(p, st); err != nil {
				return st, err
			}
			if n, first := p.logged(); n > 0 {
				// Such as "Tried to end frame …": spans of one thread
				// that overlap, which it then draws nested.
				return st, fmt.Errorf("speedscope logged %d errors or warnings while importing it; the first: %s", n, first)
			}
			return st, nil
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("no profile shown after %v (page title %q, text %q)%s", timeout, st.Title, oneLine(st.Text), p.consoleNote())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// screenshot selects the first thread whose name holds thread (speedscope's
// "n" key steps through them), opens the thread list filtered by filter
// when that is set, and captures the page (its top crop pixels if crop > 0).
func screenshot(p *page, st state, thread, filter string, width, crop int) ([]byte, error) {
	if thread != "" {
		for i := 0; !strings.Contains(st.Profile, thread); i++ {
			if i >= st.Total {
				return nil, fmt.Errorf("no thread named like %q (after %d keys: %q, text %q)", thread, i, st.Profile, st.Text)
			}
			if err := p.key("n", "KeyN", 78); err != nil {
				return nil, err
			}
			time.Sleep(100 * time.Millisecond)
			if err := p.eval(stateJS, &st); err != nil {
				return nil, err
			}
		}
	}
	if filter != "" {
		if err := p.key("t", "KeyT", 84); err != nil {
			return nil, err
		}
		time.Sleep(300 * time.Millisecond)
		if _, err := p.call("Input.insertText", map[string]any{"text": filter}); err != nil {
			return nil, err
		}
	}
	time.Sleep(700 * time.Millisecond)
	params := map[string]any{"format": "png"}
	if crop > 0 {
		// Cropped rather than drawn in a shorter window: speedscope's
		// WebGL canvas is misplaced in windows much shorter than ~500 px.
		params["clip"] = map[string]any{"x": 0, "y": 0, "width": width, "height": crop, "scale": 1}
	}
	res, err := p.call("Page.captureScreenshot", params)
	if err != nil {
		return nil, err
	}
	var r struct {
		Data string `json:"data"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(r.Data)
}

// browser is headless Chromium driven over --remote-debugging-pipe: JSON
// messages ending in a NUL byte, commands on its fd 3, answers and events
// on its fd 4.
type browser struct {
	cmd     *exec.Cmd
	dir     string
	w       io.WriteCloser
	mu      sync.Mutex
	next    int
	pending map[int]chan message
	pages   map[string]*page
	done    chan struct{}
	stderr  *tail
	once    sync.Once
	width   int
	height  int
}

type message struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *cdpError       `json:"error,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
}

type cdpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func startBrowser(bin string, w, h int) (*browser, error) {
	dir, err := os.MkdirTemp("", "traceview-chromium-")
	if err != nil {
		return nil, err
	}
	cmdIn, toBrowser, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	fromBrowser, cmdOut, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions",
		"--hide-scrollbars", "--user-data-dir="+dir, fmt.Sprintf("--window-size=%d,%d", w, h),
		"--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{cmdIn, cmdOut} // fd 3, fd 4
	errTail := &tail{}
	cmd.Stderr = errTail
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	cmdIn.Close()
	cmdOut.Close()
	b := &browser{cmd: cmd, dir: dir, w: toBrowser, pending: map[int]chan message{}, pages: map[string]*page{}, done: make(chan struct{}), stderr: errTail, width: w, height: h}
	go b.read(fromBrowser)
	if _, err := b.call("", "Browser.getVersion", nil); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

func (b *browser) read(r io.Reader) {
	defer close(b.done)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes(0)
		if err != nil {
			return
		}
		var m message
		if json.Unmarshal(line[:len(line)-1], &m) != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch, ok := b.pending[m.ID]; ok {
				delete(b.pending, m.ID)
				ch <- m
			}
		} else if p, ok := b.pages[m.SessionID]; ok {
			p.event(m)
		}
		b.mu.Unlock()
	}
}

// call sends a command (to the browser, or to a page's session) and waits
// for its answer.
func (b *browser) call(session, method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b.mu.Lock()
	b.next++
	id := b.next
	ch := make(chan message, 1)
	b.pending[id] = ch
	if params == nil {
		params = map[string]any{}
	}
	raw, _ := json.Marshal(params)
	data, _ := json.Marshal(message{ID: id, Method: method, Params: raw, SessionID: session})
	_, err := b.w.Write(append(data, 0))
	b.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		return m.Result, nil
	case <-b.done:
		return nil, fmt.Errorf("%s: chromium exited: %s", method, b.stderr.String())
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: no answer from chromium", method)
	}
}

func (b *browser) close() {
	b.once.Do(func() {
		b.call("", "Browser.close", nil)
		b.w.Close()
		exited := make(chan struct{})
		go func() { b.cmd.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			b.cmd.Process.Kill()
			<-exited
		}
		os.RemoveAll(b.dir)
	})
}

// page is one tab, attached with its own session.
type page struct {
	b       *browser
	target  string
	session string
	msgs    []string // dialogs and uncaught exceptions
	console []string // console errors and warnings, and speedscope's "Failed to load format"
}

func (b *browser) newPage() (*page, error) {
	res, err := b.call("", "Target.createTarget", map[string]any{"url": "about:blank"})
	if err != nil {
		return nil, err
	}
	var t struct {
		TargetID string `json:"targetId"`
	}
	json.Unmarshal(res, &t)
	res, err = b.call("", "Target.attachToTarget", map[string]any{"targetId": t.TargetID, "flatten": true})
	if err != nil {
		return nil, err
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(res, &s)
	p := &page{b: b, target: t.TargetID, session: s.SessionID}
	b.mu.Lock()
	b.pages[p.session] = p
	b.mu.Unlock()
	for _, m := range []string{"Page.enable", "Runtime.enable"} {
		if _, err := p.call(m, nil); err != nil {
			p.close()
			return nil, err
		}
	}
	if _, err := p.call("Emulation.setDeviceMetricsOverride", map[string]any{"width": b.width, "height": b.height, "deviceScaleFactor": 1, "mobile": false}); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

func (p *page) call(method string, params any) (json.RawMessage, error) {
	return p.b.call(p.session, method, params)
}

// event records what the page reports (under b.mu). A dialog — speedscope
// alerts "Unrecognized format!" and "…but it's empty!" — is an error; it
// is dismissed so that the page does not block.
func (p *page) event(m message) {
	switch m.Method {
	case "Page.javascriptDialogOpening":
		var d struct {
			Message string `json:"message"`
		}
		json.Unmarshal(m.Params, &d)
		p.msgs = append(p.msgs, fmt.Sprintf("speedscope says %q", d.Message))
		go p.call("Page.handleJavaScriptDialog", map[string]any{"accept": true})
	case "Runtime.exceptionThrown":
		var e struct {
			ExceptionDetails struct {
				Text      string `json:"text"`
				Exception struct {
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
		}
		json.Unmarshal(m.Params, &e)
		p.msgs = append(p.msgs, "uncaught exception in the page: "+oneLine(e.ExceptionDetails.Text+" "+e.ExceptionDetails.Exception.Description))
	case "Runtime.consoleAPICalled":
		var c struct {
			Type string `json:"type"`
			Args []struct {
				Value       any    `json:"value"`
				Description string `json:"description"`
			} `json:"args"`
		}
		json.Unmarshal(m.Params, &c)
		var parts []string
		for _, a := range c.Args {
			if a.Value != nil {
				parts = append(parts, fmt.Sprint(a.Value))
			} else {
				parts = append(parts, a.Description)
			}
		}
		text := strings.Join(parts, " ")
		if c.Type == "error" || c.Type == "warning" || strings.HasPrefix(text, "Failed to load format") {
			p.console = append(p.console, oneLine(text))
		}
	}
}

// reported is the first dialog or uncaught exception, if any.
func (p *page) reported() string {
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	if len(p.msgs) == 0 {
		return ""
	}
	return p.msgs[0] + p.consoleNoteLocked()
}

// logged is how many errors and warnings the page logged, and the first.
func (p *page) logged() (int, string) {
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	if len(p.console) == 0 {
		return 0, ""
	}
	return len(p.console), p.console[0]
}

func (p *page) consoleNote() string {
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	return p.consoleNoteLocked()
}

func (p *page) consoleNoteLocked() string {
	if len(p.console) == 0 {
		return ""
	}
	return "; console: " + p.console[0]
}

func (p *page) eval(expr string, out any) error {
	res, err := p.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})
	if err != nil {
		return err
	}
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	if r.ExceptionDetails != nil {
		return fmt.Errorf("evaluate: %s", r.ExceptionDetails.Text)
	}
	return json.Unmarshal(r.Result.Value, out)
}

// key types one key the way a keyboard does (keydown, keypress, keyup).
func (p *page) key(key, code string, vk int) error {
	for _, typ := range []string{"keyDown", "keyUp"} {
		params := map[string]any{"type": typ, "key": key, "code": code, "windowsVirtualKeyCode": vk}
		if typ == "keyDown" {
			params["text"] = key
		}
		if _, err := p.call("Input.dispatchKeyEvent", params); err != nil {
			return err
		}
	}
	return nil
}

func (p *page) close() {
	p.b.call("", "Target.closeTarget", map[string]any{"targetId": p.target})
	p.b.mu.Lock()
	delete(p.b.pages, p.session)
	p.b.mu.Unlock()
}

// tail keeps the last few kB of what Chromium writes to stderr.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > 4096 {
		t.buf = t.buf[len(t.buf)-4096:]
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return oneLine(string(t.buf))
}
