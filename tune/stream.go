package tune

import (
	"os"
	"sync"
	"time"

	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/tunedb"
)

// commitEvery bounds the measured work a killed tuner can lose: results
// that finish within it are committed together, in one transaction.
var commitEvery = 2 * time.Second

// streamer stores a batch's results while the batch runs. The measurer
// hands it each result as it becomes final (measure.Batch.Finished); a
// goroutine of its own turns them into records and commits them at most
// commitEvery after the first of them arrived, so that the measurer never
// waits for the database.
type streamer struct {
	store Store
	w     tunedb.Workload
	tool  string
	in    chan measure.Result
	done  chan struct{}

	mu   sync.Mutex
	recs []tunedb.Record // every record made, in arrival order
	err  error           // the first commit's error
}

func newStreamer(store Store, w tunedb.Workload, tool string) *streamer {
	st := &streamer{store: store, w: w, tool: tool, in: make(chan measure.Result, 64), done: make(chan struct{})}
	go st.loop()
	return st
}

// finished is the batch's Finished hook.
func (st *streamer) finished(r measure.Result) { st.in <- r }

func (st *streamer) loop() {
	defer close(st.done)
	var pending []tunedb.Record
	var flush <-chan time.Time
	commitPending := func() {
		if len(pending) == 0 {
			return
		}
		if err := commit(st.store, pending); err != nil {
			st.mu.Lock()
			if st.err == nil {
				st.err = err
			}
			st.mu.Unlock()
		}
		pending, flush = nil, nil
	}
	for {
		select {
		case r, ok := <-st.in:
			if !ok {
				commitPending()
				return
			}
			st.mu.Lock()
			rec := newRecord(st.w, r, time.Now().UTC().Add(time.Duration(len(st.recs))), st.tool)
			st.recs = append(st.recs, rec)
			st.mu.Unlock()
			pending = append(pending, rec)
			if flush == nil {
				flush = time.After(commitEvery)
			}
		case <-flush:
			commitPending()
		}
	}
}

// close commits what is left and returns every record made, with the first
// commit error.
func (st *streamer) close() ([]tunedb.Record, error) {
	close(st.in)
	<-st.done
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.recs, st.err
}

// host is this machine's name, which the records measured here carry.
var host, _ = os.Hostname()

// newRecord is the record of a result measured for w at time at. A result
// that does not say who measured it was measured by this process, with
// tool.
func newRecord(w tunedb.Workload, r measure.Result, at time.Time, tool string) tunedb.Record {
	if r.Measurer == nil {
		r.Measurer = &measure.Measurer{Host: host, Tool: tool}
	}
	return tunedb.Record{
		Workload: w, Config: r.Config, Status: tunedb.Status(r.Status), Error: r.Error,
		SamplesNS: r.SamplesNS, MedianNS: r.MedianNS, P20NS: r.P20NS, P80NS: r.P80NS,
		BuildNS: r.BuildNS, RunNS: r.RunNS, Time: at, Tool: tool,
		Registers: r.Registers, LocalBytes: r.LocalBytes,
		Disturbance: r.Disturbance, Measurer: r.Measurer,
	}
}
