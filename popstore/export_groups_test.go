package popstore

// PutRawMeta writes value under key in the meta column family, bypassing
// every encoder, to plant values an older version wrote. Test-only.
func (t *Txn) PutRawMeta(key string, value []byte) {
	t.lockSerial()
	t.b.put(cfiMeta, []byte(key), value)
}
