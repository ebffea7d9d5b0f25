package remote

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCredentials(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fleet")
	creds, err := EnsureCredentials(dir, []string{"gpu1", "cpu2@0123abcd"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range creds {
		got = append(got, c.Name+"/"+c.Role+"/"+c.Device)
	}
	if want := "cpu2/worker/0123abcd gpu1/worker/ tuner/tuner/"; strings.Join(got, " ") != want {
		t.Errorf("credentials %q, want %q", got, want)
	}
	// Made once: a second call keeps the keys the fleet holds.
	again, err := EnsureCredentials(dir, []string{"gpu1"})
	if err != nil || len(again) != 3 || again[1].Seed != creds[1].Seed {
		t.Errorf("a second call: %v, %d credentials; want the same 3", err, len(again))
	}
	path := filepath.Join(dir, CredentialFile("gpu1"))
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCredential(path); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Errorf("a credential readable by others: %v", err)
	}
	for _, bad := range []Credential{
		{Name: "a.b", Role: RoleWorker},
		{Name: "*", Role: RoleWorker},
		{Name: "w", Role: RoleWorker, Device: ">"},
		{Name: TunerName, Role: RoleWorker},
		{Name: "admin", Role: RoleTuner},
		{Name: "w", Role: "root"},
	} {
		if _, err := NewCredential(bad.Name, bad.Role, bad.Device); err == nil {
			t.Errorf("NewCredential(%q, %q, %q) accepted", bad.Name, bad.Role, bad.Device)
		}
	}
}

func TestSelfSignedKept(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	if err := SelfSigned(cert, key, []string{"10.0.0.5", "broker.example"}); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(cert)
	if err := SelfSigned(cert, key, nil); err != nil {
		t.Fatal(err)
	}
	if second, _ := os.ReadFile(cert); string(second) != string(first) {
		t.Error("a second call replaced the certificate clients trust")
	}
	if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key: %v, want a file readable by its owner only", err)
	}
	if _, err := ServerTLS(cert, key); err != nil {
		t.Error(err)
	}
	os.Remove(key)
	if err := SelfSigned(cert, key, nil); err == nil {
		t.Error("a certificate without its key was accepted")
	}
}
