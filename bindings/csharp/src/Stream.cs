// A file read front to back (fourdgs_stream_*) from any System.IO.Stream: a download, a pipe,
// an asset bundle's stream. The library calls back into static methods (IL2CPP can only hand
// static methods to native code); the System.IO.Stream travels as a GCHandle in `user`.
using System;
using System.Runtime.InteropServices;
using Fourdgs.Native;

namespace Fourdgs
{
    public sealed class SceneStream : IDisposable
    {
        readonly StreamHandle handle = new StreamHandle();
        Reader scene;

        // One copy buffer per stream, reused by every read callback.
        sealed class Source
        {
            internal System.IO.Stream Stream;
            internal byte[] Buffer = new byte[1 << 16];
        }

        // Kept in static fields: the delegates must outlive every native call that holds them.
        static readonly StreamReadFn ReadFn = Read;
        static readonly ReleaseFn ReleaseFnStatic = Release;

        [MonoPInvokeCallback(typeof(StreamReadFn))]
        static long Read(IntPtr user, IntPtr buffer, ulong length)
        {
            try
            {
                var source = (Source)GCHandle.FromIntPtr(user).Target;
                int want = (int)Math.Min(length, (ulong)source.Buffer.Length);
                int got = source.Stream.Read(source.Buffer, 0, want);
                if (got > 0) Marshal.Copy(source.Buffer, 0, buffer, got);
                return got;
            }
            catch (Exception)
            {
                return -1; // nothing may unwind into native code: the stream reports an IO failure
            }
        }

        [MonoPInvokeCallback(typeof(ReleaseFn))]
        static void Release(IntPtr user)
        {
            GCHandle.FromIntPtr(user).Free();
        }

        /// <summary>Reads `source` front to back (it is not disposed here). The front matter is
        /// read now, so Scene answers at once.</summary>
        public SceneStream(System.IO.Stream source, OpenSettings settings = null)
        {
            var user = GCHandle.Alloc(new Source { Stream = source });
            var callbacks = new StreamCallbacks
            {
                user = GCHandle.ToIntPtr(user),
                read = Marshal.GetFunctionPointerForDelegate(ReadFn),
                release = Marshal.GetFunctionPointerForDelegate(ReleaseFnStatic)
            };
            using (var o = new NativeOpenOptions(settings))
            {
                IntPtr h;
                Lib.Check(Api.fourdgs_stream_open_callbacks(ref callbacks, ref o.Value, out h)); // release ran on failure
                handle.Set(h);
            }
        }

        SceneStream() { }

        /// <summary>A URL read front to back by HTTP range requests of growing size, with the
        /// HTTP settings of `settings` (the refusals of Reader.OpenUrl).</summary>
        public static SceneStream OpenUrl(string url, OpenSettings settings = null)
        {
            byte[] u = Lib.Utf8(url);
            var stream = new SceneStream();
            using (var o = new NativeOpenOptions(settings))
            {
                IntPtr h;
                Lib.Check(Api.fourdgs_stream_open_url(u, Lib.U(u.Length), ref o.Value, out h));
                stream.handle.Set(h);
            }
            return stream;
        }

        /// <summary>The scene read so far: a Reader lent by this stream (its scene calls and
        /// EvaluateBlock work; what it lends is valid until the next NextBlock).</summary>
        public Reader Scene
        {
            get
            {
                if (scene != null) return scene;
                IntPtr r;
                Lib.Check(Api.fourdgs_stream_scene(handle, out r));
                var h = new ReaderHandle { Owned = false };
                h.Set(r);
                scene = new Reader(h, this);
                return scene;
            }
        }

        /// <summary>The next chunk (gaussian-birth) or composed state (keyframe-delta) into
        /// `block`; false at the clean end of the file.</summary>
        public bool NextBlock(Block block)
        {
            uint produced;
            Lib.Check(Api.fourdgs_stream_next_block(handle, block.Handle, out produced));
            return produced != 0;
        }

        public void Dispose()
        {
            if (scene != null) scene.Dispose();
            handle.Dispose();
        }
    }
}
