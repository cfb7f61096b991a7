// The value every element of put k carries in the array-put task, per element type and
// protocol: k wrapped to the type, and over CA an int8 as its unsigned byte (DBR_CHAR).

export function putValue(k: number, type: string, protocol: 'CA' | 'PVA'): number {
  switch (type) {
    case 'int8': {
      const u = k % 256;
      return protocol === 'CA' ? u : u >= 128 ? u - 256 : u;
    }
    case 'int16': {
      const u = k % 65536;
      return u >= 32768 ? u - 65536 : u;
    }
    case 'int32':
      return k | 0;
    default:
      return k;
  }
}
