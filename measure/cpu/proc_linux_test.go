package cpu

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestChildrenDieWithTheTuner kills a process that started a child the way
// the measurer starts go build and the harness, with SIGKILL, as a user or
// the OOM killer would kill a tuner: the child must not run on.
func TestChildrenDieWithTheTuner(t *testing.T) {
	if os.Getenv("AUTOTUNE_TEST_TUNER") == "1" {
		// The "tuner": start a child that would run for a minute, say its
		// PID, and wait to be killed.
		child := exec.Command("sleep", "60")
		newGroup(child)
		if err := child.Start(); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(child.Process.Pid)
		time.Sleep(time.Minute)
		return
	}
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep command")
	}
	tuner := exec.Command(os.Args[0], "-test.run=^TestChildrenDieWithTheTuner$")
	tuner.Env = append(os.Environ(), "AUTOTUNE_TEST_TUNER=1")
	out, err := tuner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := tuner.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		tuner.Process.Kill()
		t.Fatalf("the tuner said %q (%v)", line, err)
	}
	tuner.Process.Signal(syscall.SIGKILL)
	tuner.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the child %d ran on for 10 s after its tuner was killed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid runs: it exists and is not a zombie waiting
// for a parent to reap it.
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}
