// Evaluated instants and decoded blocks. A Frame is made once and reused for every evaluate;
// its columns are borrowed from the library (Columns) or copied into caller-owned arrays
// (CopyTo) without allocating.
using System;
using System.Runtime.InteropServices;
using Fourdgs.Native;

namespace Fourdgs
{
    /// <summary>Caller-owned structure-of-arrays buffers a Frame is copied into: center and scale
    /// 3 floats per gaussian, rotation (xyzw) and color (rgb + opacity) 4, object_id 1, flags 1,
    /// SH at ShDegree as bytes (3 * ((ShDegree+1)^2 - 1) per gaussian; byte 128 for a band the
    /// frame lacks) and, when ShFloats is set, as floats (-4 + b * 8/255; 0 for a band the frame
    /// lacks). A null array is not copied. Capacity is in gaussians.</summary>
    public sealed class FrameArrays
    {
        public float[] Center, Scale, Rotation, Color;
        public uint[] ObjectId;
        public byte[] Flags;
        public uint ShDegree;
        public byte[] ShBytes;
        public float[] ShFloats;
        public int Capacity { get; private set; }

        public static int ShPerGaussian(uint shDegree) { return 3 * ((int)((shDegree + 1) * (shDegree + 1)) - 1); }

        /// <summary>Every column, for `capacity` gaussians; SH as bytes when shDegree > 0.</summary>
        public FrameArrays(int capacity, uint shDegree = 0)
        {
            ShDegree = shDegree;
            Reserve(capacity);
        }

        /// <summary>Grows the arrays (and only then allocates) to hold `capacity` gaussians.</summary>
        public void Reserve(int capacity)
        {
            if (capacity <= Capacity && Center != null) return;
            Capacity = capacity;
            Center = new float[3 * capacity];
            Scale = new float[3 * capacity];
            Rotation = new float[4 * capacity];
            Color = new float[4 * capacity];
            ObjectId = new uint[capacity];
            Flags = new byte[capacity];
            ShBytes = ShDegree > 0 ? new byte[ShPerGaussian(ShDegree) * capacity] : null;
            ShFloats = null;
        }
    }

    public sealed class Frame : IDisposable
    {
        internal readonly FrameHandle Handle = new FrameHandle();
        // One pin per column copied: GCHandles, not heap allocations.
        readonly GCHandle[] pins = new GCHandle[7];

        public Frame()
        {
            IntPtr h;
            Lib.Check(Api.fourdgs_frame_create(IntPtr.Zero, out h));
            Handle.Set(h);
        }

        public void Dispose() { Handle.Dispose(); }

        /// <summary>The frame's columns as the library lends them: pointers valid until the next
        /// evaluate into this frame (Marshal.Copy them, or use CopyTo).</summary>
        public FrameColumns Columns
        {
            get
            {
                var c = new FrameColumns { struct_size = Lib.Size<FrameColumns>() };
                Lib.Check(Api.fourdgs_frame_columns_get(Handle, ref c));
                return c;
            }
        }

        public int Count { get { return (int)(ulong)Columns.count; } }

        /// <summary>Copies the frame into `arrays` (which must hold Count gaussians: Reserve them)
        /// and returns how many gaussians were written. Allocates nothing.</summary>
        public int CopyTo(FrameArrays arrays)
        {
            var columns = Columns;
            var b = new FrameBuffers
            {
                struct_size = Lib.Size<FrameBuffers>(), capacity = (UIntPtr)(uint)arrays.Capacity,
                sh_degree = arrays.ShDegree
            };
            try
            {
                b.center = Pin(0, arrays.Center);
                b.scale = Pin(1, arrays.Scale);
                b.rotation = Pin(2, arrays.Rotation);
                b.color = Pin(3, arrays.Color);
                b.object_id = Pin(4, arrays.ObjectId);
                b.sh_bytes = Pin(5, arrays.ShBytes);
                b.sh_floats = Pin(6, arrays.ShFloats);
                UIntPtr count;
                Lib.Check(Api.fourdgs_frame_copy(Handle, ref b, out count));
                int n = (int)(ulong)count;
                if (arrays.Flags != null && n > 0) Marshal.Copy(columns.flags, arrays.Flags, 0, n);
                return n;
            }
            finally
            {
                for (int i = 0; i < pins.Length; i++)
                    if (pins[i].IsAllocated) pins[i].Free();
            }
        }

        IntPtr Pin(int slot, Array a)
        {
            if (a == null) return IntPtr.Zero;
            pins[slot] = GCHandle.Alloc(a, GCHandleType.Pinned);
            return pins[slot].AddrOfPinnedObject();
        }
    }

    /// <summary>The kind of a Block's content (fourdgs_block_kind).</summary>
    public enum BlockKind { Empty = 0, All = 1, Instant = 2, Chunk = 3, State = 4 }

    /// <summary>Decoded gaussians before evaluation (§3's parameters), column by column.</summary>
    public sealed class Block : IDisposable
    {
        internal readonly BlockHandle Handle = new BlockHandle();

        public Block()
        {
            IntPtr h;
            Lib.Check(Api.fourdgs_block_create(IntPtr.Zero, out h));
            Handle.Set(h);
        }

        public void Dispose() { Handle.Dispose(); }

        /// <summary>The columns, borrowed until the next read into this block.</summary>
        public BlockColumns Columns
        {
            get
            {
                var c = new BlockColumns { struct_size = Lib.Size<BlockColumns>() };
                Lib.Check(Api.fourdgs_block_columns_get(Handle, ref c));
                return c;
            }
        }

        public BlockInfo Info
        {
            get
            {
                var i = new BlockInfo { struct_size = Lib.Size<BlockInfo>() };
                Lib.Check(Api.fourdgs_block_info_get(Handle, ref i));
                return i;
            }
        }

        public BlockKind Kind { get { return (BlockKind)Info.kind; } }
        public int Count { get { return (int)(ulong)Columns.count; } }
    }

    /// <summary>Copies of borrowed columns into managed arrays (for tools and tests; a render
    /// loop reuses its own arrays with Marshal.Copy).</summary>
    public static class Column
    {
        public static float[] Floats(IntPtr p, int n)
        {
            var a = new float[n];
            if (n > 0 && p != IntPtr.Zero) Marshal.Copy(p, a, 0, n);
            return p == IntPtr.Zero ? null : a;
        }

        public static byte[] Bytes(IntPtr p, int n)
        {
            var a = new byte[n];
            if (n > 0 && p != IntPtr.Zero) Marshal.Copy(p, a, 0, n);
            return p == IntPtr.Zero ? null : a;
        }

        /// <summary>uint32 or int32 columns, as int (reinterpret with unchecked((uint)x)).</summary>
        public static int[] Ints(IntPtr p, int n)
        {
            var a = new int[n];
            if (n > 0 && p != IntPtr.Zero) Marshal.Copy(p, a, 0, n);
            return p == IntPtr.Zero ? null : a;
        }
    }
}
