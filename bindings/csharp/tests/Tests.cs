// The C# binding's tests under Mono: a small runner (no test framework is packaged for Debian's
// Mono without NuGet) that prints each failure and a closing "N passed, N failed" line, and
// exits non-zero when anything failed.
//
//   mono Fourdgs.Tests.exe --corpus conformance/corpus --layout LAYOUT_EXE --player PLAYER_EXE
//                          [--only NAME_PREFIX]
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using Fourdgs.Native;

namespace Fourdgs.Tests
{
    using D = Dictionary<string, object>;

    static class Program
    {
        static int passed, failed;

        static string only = "";

        static void Test(string name, Action body)
        {
            if (!name.StartsWith(only, StringComparison.Ordinal)) return;
            var clock = Stopwatch.StartNew();
            try
            {
                body();
                passed++;
                if (clock.Elapsed.TotalSeconds > 1) Console.WriteLine("slow " + name + ": " + clock.Elapsed.TotalSeconds.ToString("F1") + " s");
            }
            catch (Exception e)
            {
                failed++;
                Console.WriteLine("FAIL " + name + ": " + (e is AssertionFailed ? e.Message : e.ToString()));
            }
        }

        sealed class AssertionFailed : Exception
        {
            public AssertionFailed(string m) : base(m) { }
        }

        static void Assert(bool ok, string what)
        {
            if (!ok) throw new AssertionFailed(what);
        }

        static int Main(string[] args)
        {
            var opt = new Dictionary<string, string>();
            for (int i = 0; i + 1 < args.Length; i += 2) opt[args[i]] = args[i + 1];
            string corpus = opt["--corpus"];
            if (opt.ContainsKey("--only")) only = opt["--only"];  // a name prefix: run those tests alone
            var valid = Directory.GetFiles(Path.Combine(corpus, "valid"), "*.4dgs").OrderBy(f => f, StringComparer.Ordinal).ToList();
            var refusals = Directory.GetFiles(Path.Combine(corpus, "refusals"), "*.4dgs").OrderBy(f => f, StringComparer.Ordinal).ToList();

            Test("corpus.present", () => Assert(valid.Count >= 40 && refusals.Count >= 60,
                                                valid.Count + " valid, " + refusals.Count + " refusal files"));
            Test("abi.version", () => Assert(Library.LoadedAbiVersion == Library.AbiVersion && Library.Version.Length > 0,
                                             "loaded ABI " + Library.LoadedAbiVersion));
            Test("layout.structs_match_the_header", () => Layout(opt["--layout"]));
            foreach (var file in valid)
                foreach (bool streamed in new[] { false, true })
                    Test("valid." + Path.GetFileNameWithoutExtension(file) + (streamed ? ".streamed" : ".indexed"),
                         () => ValidFile(file, streamed));
            foreach (var file in refusals)
                foreach (bool streamed in new[] { false, true })
                    Test("refusal." + Path.GetFileNameWithoutExtension(file) + (streamed ? ".streamed" : ".indexed"),
                         () => RefusalFile(file, streamed));
            foreach (var name in new[] { "shape-long-lived", "kd-chained" })
                Test("player." + name, () => PlayerMatchesC(opt["--player"], Path.Combine(corpus, "valid", name + ".4dgs")));
            Test("player.controls_and_audio", () => PlayerControls(Path.Combine(corpus, "valid")));
            Test("frame.copy_sh_bytes_and_floats", () => ShCopy(valid));
            Test("frame.no_allocation_per_frame", () => NoAllocation(Path.Combine(corpus, "valid", "shape-long-lived.4dgs")));
            Test("errors.missing_file", MissingFile);
            Test("errors.not_a_file", NotAFile);
            Test("errors.disposed_handle", () => Disposed(valid[0]));
            Test("reader.memory_borrowed_and_copied", () => Memory(valid[0]));
            Test("reader.url_with_http_options", UrlRefused);
            Test("validation.valid_and_refused", () => Validate(valid[0], refusals[0]));

            Console.WriteLine(passed + " passed, " + failed + " failed");
            return failed == 0 ? 0 : 1;
        }

        static string[] Run(string exe, string arg)
        {
            var p = new ProcessStartInfo(exe, arg == null ? "" : "\"" + arg + "\"")
            {
                UseShellExecute = false, RedirectStandardOutput = true
            };
            using (var proc = Process.Start(p))
            {
                string text = proc.StandardOutput.ReadToEnd();
                proc.WaitForExit();
                Assert(proc.ExitCode == 0, exe + " exited with " + proc.ExitCode);
                return text.Split(new[] { '\n' }, StringSplitOptions.RemoveEmptyEntries);
            }
        }

        // (d) Every struct's size and every field's offset as the C compiler lays them out.
        static void Layout(string exe)
        {
            var lines = Run(exe, null);
            Assert(lines.Length > 300, lines.Length + " lines from " + exe);
            var errors = new List<string>();
            int structs = 0;
            foreach (var line in lines)
            {
                var w = line.Split(' ');
                var type = typeof(Api).Assembly.GetType("Fourdgs.Native." + w[0], true);
                long c = long.Parse(w[2], CultureInfo.InvariantCulture);
                long cs = w[1] == "-" ? Marshal.SizeOf(type) : (long)Marshal.OffsetOf(type, w[1]);
                if (w[1] == "-") structs++;
                if (c != cs) errors.Add(line + " (C#: " + cs + ")");
            }
            Assert(errors.Count == 0, string.Join("; ", errors));
            Assert(structs == typeof(Api).Assembly.GetTypes().Count(t => t.Namespace == "Fourdgs.Native" &&
                                                                       t.IsValueType && !t.IsEnum),
                   "every Native struct is checked");
        }

        static D Expected(string file)
        {
            string path = Path.Combine(Path.GetDirectoryName(file), Path.GetFileNameWithoutExtension(file) + ".expected.json");
            return (D)Json.Parse(File.ReadAllText(path));
        }

        // (a) The canonical fields equal the committed document.
        static void ValidFile(string file, bool streamed)
        {
            var want = Expected(file);
            var got = Canonical.Document(file, streamed);
            string diff = Compare.Diff(got, Compare.WithoutUnexposed(want, streamed));
            Assert(diff == null, diff);
        }

        // (b) What reading the whole file (gaussians, payloads) refuses first is its identifier.
        static void RefusalFile(string file, bool streamed)
        {
            var want = Expected(file);
            FourdgsException e = null;
            try
            {
                FirstRefusal(file, streamed);
            }
            catch (FourdgsException x)
            {
                e = x;
            }
            Assert(e != null, "read without a refusal");
            Assert(e.Refusal == (string)want["refused"], "refused " + e.Refusal + " (" + e.Message + "), want " + want["refused"]);
            string kind = want.ContainsKey("kind") ? (string)want["kind"] : null;
            string got = e.Status.ToString().ToLowerInvariant();
            Assert(kind != null ? got == kind.Replace("-", "") : got == "malformed" || got == "unsupported" || got == "truncated",
                   "status " + e.Status + ", want " + (kind ?? "malformed/unsupported/truncated"));
            Assert(!string.IsNullOrEmpty(e.Detail), "a message");
        }

        static void FirstRefusal(string file, bool streamed)
        {
            using (var block = new Block())
            {
                if (streamed)
                {
                    using (var fs = File.OpenRead(file))
                    using (var stream = new SceneStream(fs, new OpenSettings { KeepPayloads = true }))
                    {
                        while (stream.NextBlock(block)) { }
                        Payloads(stream.Scene);
                    }
                    return;
                }
                using (var r = Reader.Open(file))
                {
                    if (r.Info.KeyframeDelta)
                        foreach (var c in r.Chunks) r.StateAt(c.Raw.t0, block);
                    else r.ReadAll(block);
                    Payloads(r);
                }
            }
        }

        static void Payloads(Reader r)
        {
            foreach (var a in r.Attachments) r.ReadPayload(a.Payload);
            foreach (var a in r.AudioSources) r.ReadPayload(a.Payload);
        }

        // (c) The player's frames, for the same options and clock, are the C player's (PlayerTests
        // line format of player_reference.c), and each equals Reader.Evaluate at its instant.
        static void PlayerMatchesC(string exe, string file)
        {
            var want = Run(exe, file);
            var got = new List<string>();
            using (var r = Reader.Open(file))
            using (var player = new Player(r, new PlayerSettings { Playing = true, Loop = true, Rate = 1.25, MaxShDegree = 3 }))
            using (var frame = new Frame())
            using (var check = new Frame())
            {
                double duration = r.Info.DurationSec;
                for (int k = 0; k < 80; k++)
                {
                    if (k == 40) player.Seek(0.3 * duration);
                    if (k == 60) player.SetRate(-0.5);
                    var info = player.Frame(1000 + k * 0.07, frame, wait: true);
                    var c = frame.Columns;
                    got.Add(string.Format(CultureInfo.InvariantCulture, "{0} {1:x16} {2:x16} {3} {4} {5} {6} {7:x16}", k,
                                          BitConverter.DoubleToInt64Bits(info.Time), BitConverter.DoubleToInt64Bits(info.Shown),
                                          info.Raw.late, info.Raw.state, (ulong)c.count, (ulong)c.unrepresentable, Checksum(frame)));
                    Assert(!info.Late && info.Reason == LateReason.None, "frame " + k + " late: " + info.Reason);
                    r.Evaluate(info.Shown, check);
                    Assert(Checksum(check) == Checksum(frame), "frame " + k + " differs from Evaluate(" + info.Shown + ")");
                }
            }
            Assert(want.Length == 80, want.Length + " reference lines");
            for (int k = 0; k < 80; k++)
                Assert(got[k] == want[k], "frame " + k + ":\n got  " + got[k] + "\n want " + want[k]);
        }

        /// <summary>FNV-1a 64 over the frame's columns, as player_reference.c computes it.</summary>
        static ulong Checksum(Frame frame)
        {
            var c = frame.Columns;
            int n = (int)(ulong)c.count;
            ulong h = 14695981039346656037UL;
            h = Fnv(h, c.center, n * 12);
            h = Fnv(h, c.scale, n * 12);
            h = Fnv(h, c.rotation, n * 16);
            h = Fnv(h, c.color, n * 16);
            h = Fnv(h, c.object_id, n * 4);
            h = Fnv(h, c.sh, n * (int)(ulong)c.sh_per_gaussian);
            return Fnv(h, c.flags, n);
        }

        static ulong Fnv(ulong h, IntPtr p, int size)
        {
            var b = Column.Bytes(p, size);
            if (b == null) return h;
            foreach (byte x in b) h = unchecked((h ^ x) * 1099511628211UL);
            return h;
        }

        static void PlayerControls(string validDir)
        {
            string file = Directory.GetFiles(validDir, "*.4dgs").First(f => Reader.Open(f).Info.Raw.audio_source_count > 0);
            using (var r = Reader.Open(file))
            using (var player = new Player(r))
            using (var frame = new Frame())
            {
                var first = player.Frame(5.0, frame, wait: true);
                Assert(first.State == PlaybackState.Paused, "a player starts paused: " + first.State);
                double t = 0.5 * r.Info.DurationSec;
                var at = player.FrameAt(t, frame, wait: true);
                Assert(at.Time == t && !at.Late && at.AudioCount == (int)r.Info.Raw.audio_source_count, "frame_at");
                var a = player.AudioState(0);
                var b = r.AudioStateAt(0, t);
                Assert(a.active == b.active && a.local_time == b.local_time && a.gain == b.gain,
                       "the player's audio state is the reader's at the frame's time");
                player.SetLoop(true);
                player.Play();
                var playing = player.Frame(6.0, frame, wait: true);
                Assert(playing.State == PlaybackState.Playing, "play: " + playing.State);
                player.Pause();
                var info = player.Info;
                Assert(info.frames >= 3 && info.loop == 1 && info.duration == r.Info.DurationSec, "player info");
                try
                {
                    player.Frame(double.NaN, frame);
                    Assert(false, "a NaN clock is refused");
                }
                catch (FourdgsException e)
                {
                    Assert(e.Status == Status.InvalidArgument, "NaN: " + e.Status);
                }
            }
        }

        // Frame.CopyTo with SH as bytes and as floats at degree 3: the frame's own SH bytes, then
        // the neutral byte 128 for bands it lacks; each float is its byte read as §6.5 reads it,
        // -4 + b * 8/255 (quantize.hpp sh_coefficient), and 0 for the bands the frame lacks.
        static void ShCopy(List<string> valid)
        {
            string file = valid.First(f => { using (var r = Reader.Open(f)) return r.Info.Raw.sh_degree > 0; });
            using (var r = Reader.Open(file))
            using (var frame = new Frame())
            {
                r.Evaluate(0.5 * r.Info.DurationSec, frame);
                int n = frame.Count, per = FrameArrays.ShPerGaussian(3);
                var arrays = new FrameArrays(n, 3);
                arrays.ShFloats = new float[per * n];
                Assert(frame.CopyTo(arrays) == n && n > 0, "copied " + n);
                var c = frame.Columns;
                int own = (int)(ulong)c.sh_per_gaussian / 3;
                byte[] sh = Column.Bytes(c.sh, n * 3 * own);
                for (int i = 0; i < n; i++)
                    for (int channel = 0; channel < 3; channel++)
                        for (int k = 0; k < per / 3; k++)
                        {
                            byte b = arrays.ShBytes[i * per + channel * (per / 3) + k];
                            byte want = k < own ? sh[i * 3 * own + channel * own + k] : (byte)128;
                            Assert(b == want, "sh byte " + i + "/" + channel + "/" + k + ": " + b + ", want " + want);
                            float f = arrays.ShFloats[i * per + channel * (per / 3) + k];
                            float coefficient = k < own ? -4.0f + b * (8.0f / 255.0f) : 0.0f;
                            Assert(f == coefficient, "sh float " + f + " of byte " + b + ", want " + coefficient);
                        }
            }
        }

        // The render loop's calls allocate nothing on the managed heap once warm: Player.Frame,
        // Frame.CopyTo into reserved arrays, Player.AudioState-free files, Reader.Evaluate.
        static void NoAllocation(string file)
        {
            using (var r = Reader.Open(file))
            using (var player = new Player(r, new PlayerSettings { Playing = true, Loop = true }))
            using (var frame = new Frame())
            {
                var arrays = new FrameArrays(1 << 12, 3);
                player.Frame(0, frame, wait: true);
                frame.CopyTo(arrays);
                r.Evaluate(0.5, frame);
                long before = GC.GetAllocatedBytesForCurrentThread();
                for (int k = 1; k <= 50; k++)
                {
                    var info = player.Frame(k * 0.05, frame, wait: true);
                    frame.CopyTo(arrays);
                    r.Evaluate(info.Shown, frame);
                }
                long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
                Assert(allocated == 0, allocated + " bytes allocated over 50 frames");
            }
        }

        static void MissingFile()
        {
            try
            {
                Reader.Open("/nonexistent/fourdgs-csharp-test.4dgs");
                Assert(false, "opened a missing file");
            }
            catch (FourdgsException e)
            {
                Assert(e.Status == Status.IO && e.Refusal.Length > 0 && e.Detail.Contains("fourdgs-csharp-test"),
                       "missing file: " + e.Status + " " + e.Message);
            }
        }

        static void Disposed(string file)
        {
            var r = Reader.Open(file);
            r.Dispose();
            r.Dispose();  // twice is harmless
            try
            {
                var info = r.Info;
                Assert(false, "a disposed reader answered " + info.Profile);
            }
            catch (ObjectDisposedException)
            {
            }
        }

        static void NotAFile()
        {
            var bytes = new byte[64];
            for (int i = 0; i < bytes.Length; i++) bytes[i] = (byte)'x';
            try
            {
                Reader.OpenMemory(bytes);
                Assert(false, "opened 64 bytes of 'x'");
            }
            catch (FourdgsException e)
            {
                Assert(e.Refusal == "magic-mismatch" && e.Offset == 0, "garbage: " + e.Refusal + " at " + e.Offset);
            }
        }

        static void Memory(string file)
        {
            var bytes = File.ReadAllBytes(file);
            using (var a = Reader.OpenMemory(bytes))
            using (var b = Reader.OpenMemory(bytes, new OpenSettings { CopyMemory = false }))
            using (var fa = new Frame())
            using (var fb = new Frame())
            {
                double t = 0.5 * a.Info.DurationSec;
                a.Evaluate(t, fa);
                b.Evaluate(t, fb);
                Assert(fa.Count > 0 && Checksum(fa) == Checksum(fb), "the same frame from copied and borrowed bytes");
            }
        }

        // A URL on a loopback port nobody listens on, through the reader, the stream and the
        // validator: the HTTP options reach the library (one attempt, a short timeout) and the
        // failure is an IO refusal naming the URL.
        static void UrlRefused()
        {
            var listener = new TcpListener(IPAddress.Loopback, 0);
            listener.Start();
            int port = ((IPEndPoint)listener.LocalEndpoint).Port;
            listener.Stop();
            string url = "http://127.0.0.1:" + port + "/scene.4dgs";
            var settings = new OpenSettings
            {
                HttpHeaders = new[] { "Authorization: Bearer test" }, HttpMaxAttempts = 1,
                HttpConnectTimeoutMs = 2000, HttpTransferTimeoutMs = 2000
            };
            var opens = new Action[]
            {
                () => Reader.OpenUrl(url, settings), () => SceneStream.OpenUrl(url, settings),
                () => Validation.Url(url, settings)
            };
            foreach (var open in opens)
            {
                try
                {
                    open();
                    Assert(false, "opened " + url);
                }
                catch (FourdgsException e)
                {
                    Assert((e.Status == Status.IO && e.Refusal == "http-connection" && e.Detail.Contains(url)) ||
                           (e.Status == Status.Unsupported && e.Refusal == "http-not-built"),
                           "url: " + e.Status + " " + e.Message);
                }
            }
        }

        static void Validate(string validFile, string refusalFile)
        {
            using (var v = Validation.File(validFile))
                Assert(v.Valid && v.Summary.errors == 0, validFile + " validates");
            using (var v = Validation.Memory(File.ReadAllBytes(refusalFile)))
            {
                var findings = v.Findings;
                Assert(!v.Valid && findings.Any(f => f.Severity == Severity.Error && f.Rule.Length > 0 && f.Message.Length > 0),
                       refusalFile + " has an error finding");
            }
        }
    }
}
