// Command traceview opens trace files in speedscope's static build in
// headless Chromium, fails on any error or warning the viewer reports, and
// takes a screenshot: make check-trace runs it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

func main() { os.Exit(run()) }

func run() int {
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
		return fatal(fmt.Errorf("--size %q: want WIDTHxHEIGHT", *size))
	}
	if *viewer == "" || flag.NArg() == 0 {
		flag.Usage()
		return 2
	}
	if _, err := os.Stat(filepath.Join(*viewer, "index.html")); err != nil {
		return fatal(fmt.Errorf("--viewer: %w", err))
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
		return fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	// Chromium and its profile folder go when ctx ends: on return, or on
	// SIGINT or SIGTERM.
	sig, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancelAlloc := chromedp.NewExecAllocator(sig,
		chromedp.ExecPath(*chromium), chromedp.Headless, chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.Flag("disable-extensions", true),
		chromedp.WindowSize(w, h))
	defer cancelAlloc()
	ctx, cancelBrowser := chromedp.NewContext(ctx)
	defer cancelBrowser()
	if err := chromedp.Do(ctx); err != nil { // starts Chromium
		if sig.Err() != nil {
			return interrupted()
		}
		return fatal(err)
	}

	failed := false
	for i, t := range traces {
		traceURL := base + traceURLPath(i, t)
		pageURL := base + "/index.html#profileURL=" + url.QueryEscape(traceURL)
		want, countErr := threadsInFile(t)
		var png []byte
		takeShot := *shot != "" && t == *shotTrace
		res, err := open(ctx, pageURL, filepath.Base(t), w, h, *timeout, func(tab context.Context, st state) error {
			if !takeShot {
				return nil
			}
			var err error
			png, err = screenshot(tab, st, *thread, *filter, w, *crop)
			return err
		})
		if sig.Err() != nil {
			return interrupted() // what failed is its doing, not the viewer's
		}
		switch {
		case err != nil:
			fmt.Printf("%s\t%s\tFAIL: %v\n", *name, t, err)
			failed = true
		case countErr != nil:
			fmt.Printf("%s\t%s\tFAIL: the viewer shows it, but it is not a trace-event file: %v\n", *name, t, countErr)
			failed = true
		case res.Total != want && !(want == 1 && res.Total == 0):
			fmt.Printf("%s\t%s\tFAIL: it shows %d threads; the file has %d with spans\n", *name, t, res.Total, want)
			failed = true
		default:
			fmt.Printf("%s\t%s\tok: shows all %d threads that hold spans; no error or warning\n", *name, t, want)
		}
		if takeShot && png != nil {
			if err := os.WriteFile(*shot, png, 0o644); err != nil {
				fmt.Printf("%s\t%s\tFAIL: %v\n", *name, t, err)
				failed = true
			} else {
				fmt.Printf("%s\t%s\tscreenshot %s (%d bytes)\n", *name, t, *shot, len(png))
			}
		}
	}
	if *shot != "" && !slices.Contains(traces, *shotTrace) {
		fmt.Fprintf(os.Stderr, "traceview: --screenshot-trace %q is not one of the files\n", *shotTrace)
		failed = true
	}
	if failed {
		return 1
	}
	return 0
}

func fatal(err error) int {
	fmt.Fprintln(os.Stderr, "traceview:", err)
	return 1
}

func interrupted() int {
	fmt.Fprintln(os.Stderr, "traceview: interrupted")
	return 1
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

// open loads pageURL in a new tab of the browser of ctx and waits until
// speedscope shows a profile (its title becomes "NAME - speedscope"),
// reports an error, or the timeout passes; once it shows one it calls then,
// and fails if it logged an error or a warning while importing.
func open(ctx context.Context, pageURL, name string, w, h int, timeout time.Duration, then func(context.Context, state) error) (state, error) {
	tab, closeTab := chromedp.NewContext(ctx)
	defer closeTab()
	var rep reports
	if err := chromedp.Listen(tab, func(ev any) { rep.event(tab, ev) }); err != nil {
		return state{}, err
	}
	if err := chromedp.Do(tab, chromedp.EmulateViewport(int64(w), int64(h))); err != nil {
		return state{}, err
	}
	if _, err := chromedp.Call(tab, page.Navigate, page.NavigateParams{URL: pageURL}); err != nil {
		return state{}, err
	}
	deadline := time.Now().Add(timeout)
	var st state
	for {
		if err := rep.reported(); err != nil {
			return st, err
		}
		var err error
		if st, err = chromedp.Run(tab, chromedp.Evaluate[state](stateJS)); err != nil {
			return st, err
		}
		switch {
		case st.Error:
			return st, fmt.Errorf("speedscope shows %q%s", oneLine(st.Text), rep.consoleNote())
		case st.Title == name+" - speedscope" && st.Canvas > 0 && !st.Landing:
			time.Sleep(500 * time.Millisecond) // let it draw
			if err := rep.reported(); err != nil {
				return st, err
			}
			if err := then(tab, st); err != nil {
				return st, err
			}
			if _, n, first := rep.snapshot(); n > 0 {
				// Such as "Tried to end frame …": spans of one thread
				// that overlap, which it then draws nested.
				return st, fmt.Errorf("speedscope logged %d errors or warnings while importing it; the first: %s", n, first)
			}
			return st, nil
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("no profile shown after %v (page title %q, text %q)%s", timeout, st.Title, oneLine(st.Text), rep.consoleNote())
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
func screenshot(tab context.Context, st state, thread, filter string, width, crop int) ([]byte, error) {
	if thread != "" {
		for i := 0; !strings.Contains(st.Profile, thread); i++ {
			if i >= st.Total {
				return nil, fmt.Errorf("no thread named like %q (after %d keys: %q, text %q)", thread, i, st.Profile, st.Text)
			}
			if err := chromedp.Do(tab, chromedp.KeyEvent("n"), chromedp.Sleep(100*time.Millisecond)); err != nil {
				return nil, err
			}
			var err error
			if st, err = chromedp.Run(tab, chromedp.Evaluate[state](stateJS)); err != nil {
				return nil, err
			}
		}
	}
	if filter != "" {
		if err := chromedp.Do(tab, chromedp.KeyEvent("t"), chromedp.Sleep(300*time.Millisecond)); err != nil {
			return nil, err
		}
		if _, err := chromedp.Call(tab, input.InsertText, input.InsertTextParams{Text: filter}); err != nil {
			return nil, err
		}
	}
	time.Sleep(700 * time.Millisecond)
	params := page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng}
	if crop > 0 {
		// Cropped rather than drawn in a shorter window: speedscope's
		// WebGL canvas is misplaced in windows much shorter than ~500 px.
		params.Clip = &page.Viewport{Width: float64(width), Height: float64(crop), Scale: 1}
	}
	res, err := chromedp.Call(tab, page.CaptureScreenshot, params)
	return res.Data, err
}

// reports is what a tab reports: dialogs (speedscope alerts "Unrecognized
// format!" and "…but it's empty!") and uncaught exceptions, and console
// errors and warnings (and speedscope's "Failed to load format").
type reports struct {
	mu      sync.Mutex
	msgs    []string
	console []string
}

// event records ev; chromedp.Listen calls it in order, before the answer to
// any later command. A dialog is dismissed so that the page does not block.
func (r *reports) event(tab context.Context, ev any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ev := ev.(type) {
	case *page.EventJavascriptDialogOpening:
		r.msgs = append(r.msgs, fmt.Sprintf("speedscope says %q", ev.Message))
		go chromedp.Call(tab, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
	case *runtime.EventExceptionThrown:
		text := ev.ExceptionDetails.Text
		if e := ev.ExceptionDetails.Exception; e != nil {
			text += " " + e.Description
		}
		r.msgs = append(r.msgs, "uncaught exception in the page: "+oneLine(text))
	case *runtime.EventConsoleAPICalled:
		var parts []string
		for _, a := range ev.Args {
			var s string
			switch {
			case a.Type == runtime.RemoteObjectTypeString && json.Unmarshal(a.Value, &s) == nil:
			case len(a.Value) > 0:
				s = string(a.Value)
			default:
				s = a.Description
			}
			parts = append(parts, s)
		}
		text := strings.Join(parts, " ")
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || strings.HasPrefix(text, "Failed to load format") {
			r.console = append(r.console, oneLine(text))
		}
	}
}

// snapshot is the first dialog or uncaught exception (or ""), how many
// errors and warnings the page logged, and the first of those.
func (r *reports) snapshot() (msg string, n int, first string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.msgs) > 0 {
		msg = r.msgs[0]
	}
	if len(r.console) > 0 {
		first = r.console[0]
	}
	return msg, len(r.console), first
}

// reported is the first dialog or uncaught exception as an error, if any.
func (r *reports) reported() error {
	if msg, _, _ := r.snapshot(); msg != "" {
		return errors.New(msg + r.consoleNote())
	}
	return nil
}

func (r *reports) consoleNote() string {
	if _, n, first := r.snapshot(); n > 0 {
		return "; console: " + first
	}
	return ""
}
