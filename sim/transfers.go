package sim

// The transfers of engine: partitions read (and checksummed), written
// back and moved over PCIe, each on its device's server.

import "github.com/tierflow/tierflow/report"

// readPartition reads n bytes of partitions and, when the system
// checksums them, verifies them on the loader's thread before done; name
// and args describe it in the trace, load is its load (or -1).
func (e *engine) readPartition(n float64, name string, args map[string]any, load int, done func()) {
	start := e.k.Now()
	e.read.Transfer(n, Read, func() {
		if e.tr != nil {
			i := e.tr.span(e.readTrack, name, start, e.k.Now(), args)
			if load >= 0 {
				e.tr.readSpan[load] = i
			}
		}
		e.readArrived(load)
		install := func() { e.pcie(e.h2d, n, name, args, done) }
		if e.crcLoad == nil {
			install()
			return
		}
		crc := e.k.Now()
		e.crcLoad.Transfer(n, Read, func() {
			if e.tr != nil {
				e.tr.span(report.CheckLoad, name, crc, e.k.Now(), args)
			}
			install()
		})
	})
}

// pcie copies n bytes of a partition over link (a GPU slot's install or
// eviction) and then calls done; without GPU slots (link nil) it calls
// done at once.
func (e *engine) pcie(link *Link, n float64, name string, args map[string]any, done func()) {
	if link == nil {
		done()
		return
	}
	start := e.k.Now()
	link.Transfer(n, Read, func() {
		if e.tr != nil {
			e.tr.span(link.Name, name, start, e.k.Now(), args)
		}
		done()
	})
}

// readArrived marks load's read arrived (load < 0: not a Plan load) and
// sends the write-back held for it to the device; without
// System.WriteAfterRead nothing waits for a read.
func (e *engine) readArrived(load int) {
	if load < 0 || !e.writeAfterRead {
		return
	}
	e.arrived[load] = true
	if w, ok := e.held[load]; ok {
		delete(e.held, load)
		w()
	}
}

// writePartition writes n bytes of partitions back, checksummed first on
// the writer's thread when the system checksums them; name and args
// describe it in the trace.
func (e *engine) writePartition(n float64, name string, args map[string]any, done func()) {
	e.evictAndWrite(n, -1, name, args, func() {}, done)
}

// evictAndWrite is writePartition for a partition that, with GPU slots,
// is first copied back from the GPU: evicted is called once it is in
// host memory (at once without GPU slots), done when it is written. load
// is the Plan load that evicts it (-1: a flush, a checkpoint, the
// resident table): under executor.Policy.WriteAfterRead its write waits
// for that load's read to arrive.
func (e *engine) evictAndWrite(n float64, load int, name string, args map[string]any, evicted, done func()) {
	e.pcie(e.d2h, n, name, args, func() {
		evicted()
		e.writeHost(n, load, name, args, done)
	})
}

// writeHost writes n bytes of partitions from host memory, after load's
// read has arrived when the policy asks (evictAndWrite).
func (e *engine) writeHost(n float64, load int, name string, args map[string]any, done func()) {
	transfer := func() {
		start := e.k.Now()
		e.write.Transfer(n, Write, func() {
			if e.tr != nil {
				e.tr.span(e.writeTrack, name, start, e.k.Now(), args)
			}
			done()
		})
	}
	write := transfer
	if load >= 0 && e.writeAfterRead {
		write = func() {
			if e.arrived[load] {
				transfer()
				return
			}
			e.held[load] = transfer
		}
	}
	if e.crcWrite == nil {
		write()
		return
	}
	crc := e.k.Now()
	e.crcWrite.Transfer(n, Write, func() {
		if e.tr != nil {
			e.tr.span(report.CheckWrite, name, crc, e.k.Now(), args)
		}
		write()
	})
}
