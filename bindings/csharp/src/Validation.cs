// Every problem in a file, not just the first (fourdgs_validate_*).
using System;
using System.Collections.Generic;
using Fourdgs.Native;

namespace Fourdgs
{
    public enum Severity { Error = 1, Warning = 2 }

    public sealed class ValidationFinding
    {
        public Severity Severity;
        public string Rule, Field, Value, Section, Message;
        public ulong? Offset;
    }

    public sealed class Validation : IDisposable
    {
        readonly ValidationHandle handle = new ValidationHandle();

        Validation(IntPtr h) { handle.Set(h); }

        delegate Status ValidateCall(ref OpenOptions o, out IntPtr handle);

        static Validation Validated(OpenSettings settings, ValidateCall call)
        {
            using (var o = new NativeOpenOptions(settings))
            {
                IntPtr h;
                Lib.Check(call(ref o.Value, out h));
                return new Validation(h);
            }
        }

        /// <summary>Validates a file. Fails only when the file cannot be read; a file full of
        /// errors is a Validation with Valid false.</summary>
        public static Validation File(string path, OpenSettings settings = null)
        {
            byte[] p = Lib.Utf8(path);
            return Validated(settings, (ref OpenOptions o, out IntPtr h) =>
                Api.fourdgs_validate_file(p, Lib.U(p.Length), ref o, out h));
        }

        public static Validation Memory(byte[] data, OpenSettings settings = null)
        {
            if (data == null) throw new ArgumentNullException("data");
            return Validated(settings, (ref OpenOptions o, out IntPtr h) =>
                Api.fourdgs_validate_memory(data, Lib.U(data.Length), ref o, out h));
        }

        /// <summary>A URL, read by range requests with the HTTP settings of `settings`.</summary>
        public static Validation Url(string url, OpenSettings settings = null)
        {
            byte[] u = Lib.Utf8(url);
            return Validated(settings, (ref OpenOptions o, out IntPtr h) =>
                Api.fourdgs_validate_url(u, Lib.U(u.Length), ref o, out h));
        }

        public void Dispose() { handle.Dispose(); }

        public ValidationSummary Summary
        {
            get
            {
                var s = new ValidationSummary { struct_size = Lib.Size<ValidationSummary>() };
                Lib.Check(Api.fourdgs_validation_summary_get(handle, ref s));
                return s;
            }
        }

        public bool Valid { get { return Summary.valid != 0; } }

        public List<ValidationFinding> Findings
        {
            get
            {
                var list = new List<ValidationFinding>();
                for (int i = 0, count = (int)Summary.finding_count; i < count; i++)
                {
                    var f = new Finding { struct_size = Lib.Size<Finding>() };
                    Lib.Check(Api.fourdgs_validation_finding(handle, (UIntPtr)(uint)i, ref f));
                    list.Add(new ValidationFinding
                    {
                        Severity = (Severity)f.severity, Rule = Lib.Str(f.rule), Field = Lib.Str(f.field),
                        Value = Lib.Str(f.value), Section = Lib.Str(f.section), Message = Lib.Str(f.message),
                        Offset = f.offset == ulong.MaxValue ? (ulong?)null : f.offset
                    });
                }
                return list;
            }
        }
    }
}
