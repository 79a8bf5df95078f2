package testhosts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// childEnv, when set, makes the test binary a helper run inside a host:
// "down" reads childBytes bytes from childAddr, "up" writes them there,
// "hold" makes a Net, prints it and waits to be killed.
const (
	childEnv   = "TESTHOSTS_CHILD"
	childAddr  = "TESTHOSTS_ADDR"
	childBytes = "TESTHOSTS_BYTES"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		if err := child(mode); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// report is what a "down" child prints: how long connecting took, and how
// many bytes arrived after the first read in how long.
type report struct {
	Connect time.Duration
	Bytes   int64
	Span    time.Duration
}

func child(mode string) error {
	if mode == "hold" {
		nt, err := New(context.Background(), 2, "10mbit", 0)
		if err != nil {
			return err
		}
		if err := json.NewEncoder(os.Stdout).Encode(nt); err != nil {
			return err
		}
		time.Sleep(time.Minute) // the test kills us long before
		return nil
	}
	n, err := strconv.ParseInt(os.Getenv(childBytes), 10, 64)
	if err != nil {
		return err
	}
	t0 := time.Now()
	c, err := net.DialTimeout("tcp", os.Getenv(childAddr), 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	connect := time.Since(t0)
	if err := c.SetDeadline(time.Now().Add(15 * time.Second)); err != nil {
		return err
	}
	switch mode {
	case "up":
		_, err = io.CopyN(c, zeros{}, n)
		return err
	case "down":
		got, span, err := timedRead(c, n)
		if err != nil {
			return err
		}
		return json.NewEncoder(os.Stdout).Encode(report{connect, got, span})
	}
	return fmt.Errorf("unknown %s %q", childEnv, mode)
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// timedRead reads n bytes and returns how many came after the first read
// and how long they took (the first read waits on the peer, not the link).
func timedRead(r io.Reader, n int64) (int64, time.Duration, error) {
	buf := make([]byte, 64<<10)
	var total, after int64
	var first time.Time
	for total < n {
		k, err := r.Read(buf)
		if total == 0 && k > 0 {
			first = time.Now()
		} else {
			after += int64(k)
		}
		total += int64(k)
		if err != nil {
			return 0, 0, fmt.Errorf("read %d of %d bytes: %w", total, n, err)
		}
	}
	return after, time.Since(first), nil
}

// runChild runs this test binary in a host as a child in mode.
func runChild(ctx context.Context, nt *Net, host int, mode, addr string, n int64) ([]byte, error) {
	cmd := nt.Command(ctx, host, os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+mode, childAddr+"="+addr, childBytes+"="+strconv.FormatInt(n, 10))
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("child %s in %s: %w: %s", mode, nt.Hosts[host].Name, err, strings.TrimSpace(errOut.String()))
	}
	return out, nil
}

// transfer moves n bytes over host's link, to it ("down") or from it
// ("up"), between a server on the gateway and a child in the host, and
// returns the payload rate in bits per second and the connect time (one
// round trip; zero for "up").
func transfer(nt *Net, host int, dir string, n int64) (float64, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ln, err := net.Listen("tcp", net.JoinHostPort(nt.Gateway, "0"))
	if err != nil {
		return 0, 0, err
	}
	defer ln.Close()
	type result struct {
		bytes int64
		span  time.Duration
		err   error
	}
	served := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			served <- result{err: err}
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(15 * time.Second))
		if dir == "down" {
			_, err = io.CopyN(c, zeros{}, n)
			served <- result{err: err}
			return
		}
		got, span, err := timedRead(c, n)
		served <- result{got, span, err}
	}()
	out, err := runChild(ctx, nt, host, dir, ln.Addr().String(), n)
	srv := <-served
	if err = errors.Join(err, srv.err); err != nil {
		return 0, 0, err
	}
	if dir == "up" {
		return float64(srv.bytes*8) / srv.span.Seconds(), 0, nil
	}
	var r report
	if err := json.Unmarshal(out, &r); err != nil {
		return 0, 0, fmt.Errorf("child said %q: %w", out, err)
	}
	return float64(r.Bytes*8) / r.Span.Seconds(), r.Connect, nil
}

// TestShapedRate moves 6 MB over each direction of each of two hosts' 80
// Mbit/s links, then down both links at once, and checks each transfer's
// payload rate is within 20% of the link's: a physical check that the
// kernel shapes the links, not a timing of our code.
func TestShapedRate(t *testing.T) {
	nt := ForTest(t, 2, "80mbit")
	const n = 6 << 20
	within := func(t *testing.T, bps float64) {
		t.Logf("%s: %.1f Mbit/s payload over an %.0f Mbit/s link (%.0f%%)", t.Name(), bps/1e6, float64(nt.Rate)/1e6, 100*bps/float64(nt.Rate))
		assert.InEpsilon(t, float64(nt.Rate), bps, 0.2)
	}
	for host := range nt.Hosts {
		for _, dir := range []string{"down", "up"} {
			t.Run(fmt.Sprintf("host%d/%s", host, dir), func(t *testing.T) {
				bps, _, err := transfer(nt, host, dir, n)
				require.NoError(t, err)
				within(t, bps)
			})
		}
	}
	t.Run("both/down", func(t *testing.T) {
		var wg sync.WaitGroup
		bps := make([]float64, len(nt.Hosts))
		errs := make([]error, len(nt.Hosts))
		for host := range nt.Hosts {
			wg.Go(func() { bps[host], _, errs[host] = transfer(nt, host, "down", n) })
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...))
		for _, b := range bps {
			within(t, b) // each link is its own: neither halves the other
		}
	})
}

func TestDelay(t *testing.T) {
	if err := DelaySupported(); err != nil {
		t.Skip(err)
	}
	nt, err := New(context.Background(), 1, "100mbit", 10*time.Millisecond)
	require.NoError(t, err)
	defer func() { assert.NoError(t, nt.Close()) }()
	_, connect, err := transfer(nt, 0, "down", 1<<20)
	require.NoError(t, err)
	t.Logf("connect (one round trip) took %v over links delayed 10ms each way", connect)
	assert.GreaterOrEqual(t, connect, 20*time.Millisecond)
	assert.Less(t, connect, 200*time.Millisecond)
}

// names lists the namespaces and links now on the machine.
func names(t *testing.T) string {
	ns, err := exec.Command("ip", "netns", "list").CombinedOutput()
	require.NoError(t, err, "%s", ns)
	links, err := exec.Command("ip", "-o", "link", "show").CombinedOutput()
	require.NoError(t, err, "%s", links)
	return string(ns) + string(links)
}

// gone asserts none of nt's namespaces, links or its bridge is left.
func gone(t *testing.T, nt *Net) {
	t.Helper()
	left := names(t)
	assert.NotContains(t, left, nt.Bridge+":")
	for _, h := range nt.Hosts {
		assert.NotContains(t, left, h.Name+" ")
		assert.NotContains(t, left, h.Name+"\n")
		assert.NotContains(t, left, h.Link+"@")
	}
}

func TestCloseRemovesEverything(t *testing.T) {
	if err := Supported(); err != nil {
		t.Skip(err)
	}
	nt, err := New(context.Background(), 3, "10mbit", 0)
	require.NoError(t, err)
	before := names(t)
	assert.Contains(t, before, nt.Bridge+":")
	for _, h := range nt.Hosts {
		assert.Contains(t, before, h.Name)
		assert.Contains(t, before, h.Link+"@")
	}
	require.NoError(t, nt.Close())
	gone(t, nt)
	assert.NoError(t, nt.Close(), "a second Close does nothing")
}

func TestTwoNetsDoNotClash(t *testing.T) {
	if err := Supported(); err != nil {
		t.Skip(err)
	}
	nets := make([]*Net, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range nets {
		wg.Go(func() { nets[i], errs[i] = New(context.Background(), 2, "200mbit", 0) })
	}
	wg.Wait()
	for _, nt := range nets {
		if nt != nil {
			t.Cleanup(func() { assert.NoError(t, nt.Close()) })
		}
	}
	require.NoError(t, errors.Join(errs...))
	a, b := nets[0], nets[1]
	assert.NotEqual(t, a.Gateway, b.Gateway)
	assert.False(t, a.Subnet.Overlaps(b.Subnet))
	assert.NotEqual(t, a.Bridge, b.Bridge)
	for i := range a.Hosts {
		assert.NotEqual(t, a.Hosts[i].Name, b.Hosts[i].Name)
		assert.NotEqual(t, a.Hosts[i].Link, b.Hosts[i].Link)
	}
	// Each host reaches its own gateway and not the other Net's.
	for _, nt := range nets {
		_, _, err := transfer(nt, 1, "down", 64<<10)
		assert.NoError(t, err, "%s host 1 to its gateway", nt.Bridge)
	}
	other := a.Command(context.Background(), 0, "ip", "route", "get", b.Gateway)
	out, err := other.CombinedOutput()
	assert.Error(t, err, "a host of one Net has no route to the other's gateway: %s", out)
}

// TestSweepRemovesKilledRun kills a process that holds a Net and checks
// Sweep removes what it left.
func TestSweepRemovesKilledRun(t *testing.T) {
	if err := Supported(); err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"=hold")
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var left Net
	err = json.NewDecoder(out).Decode(&left)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	require.NoError(t, err, "child: %s", errOut.String())
	require.Contains(t, names(t), left.Bridge+":", "the killed run's bridge is still there")

	require.NoError(t, Sweep(context.Background()))
	gone(t, &left)
}

func TestParseRate(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		err  string
	}{
		{in: "100mbit", want: 100e6},
		{in: "2.5Gbit", want: 2.5e9},
		{in: "64kbit", want: 64e3},
		{in: "800bit", want: 800},
		{in: "100", err: "want a number and a unit"},
		{in: "100mbps", err: "want a number and a unit"},
		{in: "0mbit", err: "positive"},
		{in: "fastmbit", err: "positive"},
	} {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseRate(c.in)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

func TestBurst(t *testing.T) {
	assert.Equal(t, int64(16<<10), burst(1e6), "floor")
	assert.Equal(t, int64(40000), burst(80e6), "4 ms at 80 Mbit/s")
	assert.Equal(t, int64(500000), burst(1e9), "4 ms at 1 Gbit/s")
}
