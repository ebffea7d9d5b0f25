package tunedb

import (
	"fmt"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/autotune-dev/autotune/dtype"
)

// bucketModels holds saved cost models, created on the first save so that
// databases written before models existed need no migration.
var bucketModels = []byte("models")

// ModelKey names a saved cost model. One model serves every shape of an op
// of one dtype on a device, for one template version (whose knobs fix the
// feature layout).
type ModelKey struct {
	Op, Device, Template string
	DType                dtype.DType // "" is dtype.Default
}

// bytes is the stored key. Models of the default dtype keep the key they
// had before keys named a dtype, so that they still load; others append
// the dtype after a NUL, which no device fingerprint contains.
func (k ModelKey) bytes() []byte {
	key := k.Op + " " + k.Template + " " + k.Device
	if k.DType != "" && k.DType != dtype.Default {
		key += "\x00" + string(k.DType)
	}
	return []byte(key)
}

// SaveModel stores a serialised cost model under k, replacing any earlier
// one. Models are derived data: export leaves them out, and a tuner can
// always retrain one from the records.
func (db *DB) SaveModel(k ModelKey, model []byte) error {
	if k.Op == "" || k.Device == "" || k.Template == "" {
		return fmt.Errorf("tunedb: model key %+v has an empty field", k)
	}
	return db.update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketModels)
		if err != nil {
			return err
		}
		return b.Put(k.bytes(), model)
	})
}

// LoadModel returns the model saved under k, if any.
func (db *DB) LoadModel(k ModelKey) (model []byte, ok bool, err error) {
	err = db.view(func(tx *bbolt.Tx) error {
		if b := tx.Bucket(bucketModels); b != nil {
			if v := b.Get(k.bytes()); v != nil {
				model, ok = slices.Clone(v), true
			}
		}
		return nil
	})
	return model, ok, err
}
