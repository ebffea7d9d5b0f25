package tunedb

import (
	"fmt"
	"slices"

	"go.etcd.io/bbolt"
)

// bucketModels holds saved cost models, created on the first save so that
// databases written before models existed need no migration.
var bucketModels = []byte("models")

// ModelKey names a saved cost model. One model serves every shape of an op
// on a device, for one template version (whose knobs fix the feature
// layout).
type ModelKey struct {
	Op, Device, Template string
}

func (k ModelKey) bytes() []byte { return []byte(k.Op + " " + k.Template + " " + k.Device) }

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
