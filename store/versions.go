package store

import (
	"encoding/binary"
	"errors"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
)

// Change Dumps carry each change's bytes as they were at that change, but a
// record's d/ key holds only its current bytes. So when an event replaces or
// removes a live record's bytes, the old bytes are kept as a version, keyed by
// the content hash they had:
//
//	v/repo·prefix·id·sha256   8-byte seq of the superseding event, then the bytes
//	V/repo·prefix·seq·id      index of versions by superseding event, for pruning
//
// Only records that change pay for this, and only until retention prunes the
// events that could name the old bytes (all older than the superseding event).

func versionKey(repo, prefix, id, sha string) []byte { return key('v', repo, prefix, id, sha) }

func versionIndexKey(repo, prefix string, seq uint64, id, sha string) []byte {
	k := seqKey('V', seq, repo, prefix)
	k = append(k, 0)
	k = append(k, id...)
	k = append(k, 0)
	return append(k, sha...)
}

// keepVersion stages a copy of the record's current bytes when next, written
// by event seq, replaces or removes them.
func (b *Batch) keepVersion(next *Record, metadata []byte, seq uint64) error {
	old, err := b.Get(next.Identifier)
	if err != nil || old == nil || old.Deleted || old.SHA256 == "" {
		return err
	}
	if !next.Deleted && (metadata == nil || next.SHA256 == old.SHA256) {
		return nil // the bytes stay
	}
	it, err := b.txn.Get(key('d', b.repo, b.prefix, next.Identifier))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return wrapKey(err, b.repo, b.prefix, next.Identifier)
	}
	v := binary.BigEndian.AppendUint64(make([]byte, 0, 8+it.ValueSize()), seq)
	if err := it.Value(func(old []byte) error { v = append(v, old...); return nil }); err != nil {
		return wrapKey(err, b.repo, b.prefix, next.Identifier)
	}
	vk := versionKey(b.repo, b.prefix, next.Identifier, old.SHA256)
	// The same bytes kept earlier (the record came back to them): the old
	// index entry would prune them too soon.
	if prev, err := b.txn.Get(vk); err == nil {
		var prevSeq uint64
		if err := prev.Value(func(p []byte) error {
			if len(p) < 8 {
				return errCorrupt
			}
			prevSeq = binary.BigEndian.Uint64(p)
			return nil
		}); err != nil {
			return err
		}
		b.stageDel(versionIndexKey(b.repo, b.prefix, prevSeq, next.Identifier, old.SHA256))
	} else if !errors.Is(err, badger.ErrKeyNotFound) {
		return err
	}
	b.stage(vk, v)
	b.stage(versionIndexKey(b.repo, b.prefix, seq, next.Identifier, old.SHA256), nil)
	return nil
}

// Bytes returns the bytes a record had with the content hash sha: its current
// bytes if it still has them, else the kept version; nil if neither exists
// (pruned, or never known).
func (s *Snap) Bytes(repo, prefix, id, sha string) ([]byte, error) {
	r, err := s.Record(repo, prefix, id)
	if err != nil {
		return nil, err
	}
	if r != nil && !r.Deleted && r.SHA256 == sha {
		return s.Metadata(repo, prefix, id)
	}
	it, err := s.txn.Get(versionKey(repo, prefix, id, sha))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, wrapKey(err, repo, prefix, id)
	}
	v, err := it.ValueCopy(nil)
	if err != nil || len(v) < 8 {
		return nil, fmt.Errorf("store: version %s/%s/%q %s: %w", repo, prefix, id, sha, errors.Join(err, errCorrupt))
	}
	return v[8:], nil
}
