package remote

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"time"
)

// SelfSigned makes sure certFile and keyFile hold a certificate and its
// key for the broker: an existing pair is kept (clients already trust
// it), a missing one is made, self-signed, valid for ten years for hosts
// (names or IP addresses) and for loopback. Clients trust it by naming
// certFile as their CA (nats.RootCAs); the key file is readable by its
// owner only.
func SelfSigned(certFile, keyFile string, hosts []string) error {
	_, cerr := os.Stat(certFile)
	_, kerr := os.Stat(keyFile)
	switch {
	case cerr == nil && kerr == nil:
		return nil
	case cerr == nil || kerr == nil:
		return fmt.Errorf("remote: one of %s and %s is missing: remove the other to have a new pair made", certFile, keyFile)
	case !errors.Is(cerr, fs.ErrNotExist):
		return fmt.Errorf("remote: %w", cerr)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("remote: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return fmt.Errorf("remote: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "autotune broker"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true, // its own CA: clients trust it directly
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			if !ip.IsUnspecified() {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			}
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("remote: %w", err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("remote: %w", err)
	}
	if err := writePEM(keyFile, "PRIVATE KEY", kder, 0o600); err != nil {
		return err
	}
	if err := writePEM(certFile, "CERTIFICATE", der, 0o644); err != nil {
		os.Remove(keyFile)
		return err
	}
	return nil
}

func writePEM(path, kind string, der []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("remote: %w", err)
	}
	err = pem.Encode(f, &pem.Block{Type: kind, Bytes: der})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("remote: %w", err)
	}
	return nil
}

// ServerTLS returns the TLS configuration of a broker serving certFile
// with keyFile.
func ServerTLS(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
