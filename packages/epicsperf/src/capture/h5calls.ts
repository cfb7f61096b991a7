// The h5wasm calls the capture writer (writer.ts) makes on datasets: create one extendable,
// keep it open, and append a block to it with h5wasm's low-level resize and write.
import * as h5wasm from 'h5wasm/node';

export type Dataset = InstanceType<typeof h5wasm.Dataset>;
export type H5File = InstanceType<typeof h5wasm.File>;

/** An empty dataset, extendable along its first dimension. */
export function extendable(file: H5File, path: string, dtype: string, chunks: number[]): Dataset {
  const shape = chunks.map((c, i) => (i === 0 ? 0 : c));
  const maxshape = shape.map((d, i) => (i === 0 ? null : d));
  const slash = path.lastIndexOf('/');
  const parent = file.get(path.slice(0, slash)) as InstanceType<typeof h5wasm.Group>;
  return parent.create_dataset({ name: path.slice(slash + 1), data: [], shape, maxshape, chunks, dtype });
}

/**
 * Keep a dataset open in HDF5 for the life of the file. h5wasm opens a dataset by its path for
 * each call and closes it after; with no handle left open, each call read the dataset's metadata
 * and its last chunk back (HDF5's metadata cache holds about 2 MB, and a dataset's chunk cache
 * dies with its last handle), so a flush of 1000 scalar PVs read 40 MB and wrote 29 MB for 0.3 MB
 * of data. h5wasm has no call that returns a handle, but its refresh_dataset opens the dataset
 * and leaves it open: later opens by path share that open dataset, its chunk cache and its object
 * header. It also writes the dataset's metadata and reads it back, so it runs inside a flush (the
 * first one that writes the dataset), where ordered.ts orders those writes. The handles are never
 * closed (h5wasm has no call for it): HDF5 closes the file when the process (the worker) ends,
 * after the writer's last flush and close have put everything on disk.
 */
export function keepOpen(ds: Dataset): void {
  if (h5wasm.Module.refresh_dataset(ds.file_id, ds.path) < 0) throw new Error(`cannot open ${ds.path}`);
}

/**
 * Grow a dataset to `shape` and write `data` (already of the dataset's element type; one array
 * or parts in order) at `ranges`: h5wasm's own resize and write calls, less the metadata read
 * that write_slice does on every call (a tenth of a millisecond, which adds up over thousands of
 * datasets a flush).
 */
export function appendBlock(
  ds: Dataset,
  shape: number[],
  ranges: [number, number][],
  data: ArrayBufferView | readonly ArrayBufferView[],
): void {
  const M = h5wasm.Module;
  if (M.resize_dataset(ds.file_id, ds.path, shape.map(BigInt)) < 0) throw new Error(`cannot resize ${ds.path}`);
  const parts = ArrayBuffer.isView(data) ? [data] : data;
  const size = parts.reduce((a, p) => a + p.byteLength, 0);
  const ptr = M._malloc(Math.max(1, size));
  if (ptr === 0) throw new Error(`out of memory for ${size} bytes of ${ds.path}`);
  try {
    let at = ptr;
    for (const p of parts) {
      M.HEAPU8.set(new Uint8Array(p.buffer, p.byteOffset, p.byteLength), at);
      at += p.byteLength;
    }
    const count = ranges.map(([a, b]) => BigInt(b - a));
    const offset = ranges.map(([a]) => BigInt(a));
    const strides = ranges.map(() => 1n);
    if (M.set_dataset_data(ds.file_id, ds.path, count, offset, strides, BigInt(ptr)) < 0) throw new Error(`cannot write ${ds.path}`);
  } finally {
    M._free(ptr);
  }
}
