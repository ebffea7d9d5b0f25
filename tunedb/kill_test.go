//go:build unix

package tunedb

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/autotune-dev/autotune/schedule"
)

const helperEnv = "TUNEDB_TEST_HELPER_DB"

var killed = Workload{Op: "softmax", Shape: []int{64, 64}, DType: "f32", Device: device, Template: "kill"}

// helperBatch is batch n of the helper's endless run: 20 distinct configs,
// some failed, all derived from n so the parent can rebuild them.
func helperBatch(n int) []Record {
	recs := make([]Record, 20)
	for j := range recs {
		c, err := schedule.NewConfig([]string{"batch", "slot"}, []schedule.Value{schedule.IntValue(n), schedule.IntValue(j)})
		if err != nil {
			panic(err)
		}
		r := Record{
			Schema: SchemaVersion, Workload: killed, Config: c, Status: StatusOK,
			SamplesNS: []float64{float64(1000+20*n+j) - 0.5, float64(1000+20*n+j) + 0.5}, MedianNS: float64(1000 + 20*n + j),
			BuildNS: int64(n), RunNS: int64(j), Time: time.Unix(1_700_000_000+int64(n), int64(j)).UTC(), Tool: "helper",
		}
		if j%5 == 4 {
			r.Status, r.Error, r.SamplesNS, r.MedianNS = StatusCrash, fmt.Sprintf("crash %d/%d", n, j), nil, 0
		}
		recs[j] = r
	}
	return recs
}

// TestHelperCommitLoop is the child of TestKillDuringCommit: it commits
// batches until it is killed.
func TestHelperCommitLoop(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("runs only as the child of TestKillDuringCommit")
	}
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; ; n++ {
		if err := db.Commit(helperBatch(n)); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("committed %d\n", n)
	}
}

// TestKillDuringCommit kills a process in the middle of committing batches
// and checks that every batch it reported committed is intact.
func TestKillDuringCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tune.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCommitLoop$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	guard := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer guard.Stop()

	last, sent := -1, false
	sc := bufio.NewScanner(out)
	for sc.Scan() { // until the pipe closes, to see lines written just before the kill
		var n int
		if _, err := fmt.Sscanf(sc.Text(), "committed %d", &n); err != nil {
			continue
		}
		last = n
		if n >= 30 && !sent {
			cmd.Process.Kill() // SIGKILL
			sent = true
		}
	}
	cmd.Wait()
	if !sent || cmd.ProcessState.Exited() {
		t.Fatalf("helper stopped by itself after batch %d: %v\n%s", last, cmd.ProcessState, stderr.Bytes())
	}

	db := openAt(t, path)
	if err := db.bolt.View(func(tx *bbolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	}); err != nil {
		t.Fatalf("bbolt check after the kill: %v", err)
	}
	recs, err := db.Records(killed)
	if err != nil {
		t.Fatal(err)
	}
	stored := make(map[string]string)
	for _, r := range recs {
		b, _ := json.Marshal(r)
		stored[string(recordKey(r.Config, r.Time))] = string(b)
	}
	// Batches are whole: the reported ones, and perhaps the one in flight.
	if n := len(recs); n%20 != 0 || n/20 < last+1 || n/20 > last+2 {
		t.Errorf("%d records after %d reported batches", n, last+1)
	}
	for n := 0; n < len(recs)/20; n++ {
		for _, r := range helperBatch(n) {
			want, _ := json.Marshal(r)
			if got := stored[string(recordKey(r.Config, r.Time))]; got != string(want) {
				t.Fatalf("batch %d, config %s: stored %s, want %s", n, r.Config, got, want)
			}
		}
	}
	t.Logf("killed after %d reported batches; %d records stored", last+1, len(recs))
}
