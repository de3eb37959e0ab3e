# The reference for lvsd's PCRE2 → JavaScript rewrite: libpcre2-8, the library keepalived 2.2.7's
# HTTP_GET links, called the way check_http.c calls it (8-bit, the url's regex_options, the match started
# at regex_min_offset, counted only when it starts at or before regex_max_offset). Reads a JSON list of
# cases on stdin, writes a JSON list of verdicts: true (matched), false, or "compile error".
import ctypes, json, sys

OPTIONS = {
    'allow_empty_class': 0x1, 'alt_bsux': 0x2, 'auto_callout': 0x4, 'caseless': 0x8, 'dollar_endonly': 0x10,
    'dotall': 0x20, 'dupnames': 0x40, 'extended': 0x80, 'firstline': 0x100, 'match_unset_backref': 0x200,
    'multiline': 0x400, 'never_ucp': 0x800, 'never_utf': 0x1000, 'no_auto_capture': 0x2000,
    'no_auto_possess': 0x4000, 'no_dotstar_anchor': 0x8000, 'no_start_optimize': 0x10000, 'ucp': 0x20000,
    'ungreedy': 0x40000, 'utf': 0x80000,
}

lib = ctypes.CDLL('libpcre2-8.so.0')
lib.pcre2_compile_8.restype = ctypes.c_void_p
lib.pcre2_compile_8.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint32, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_size_t), ctypes.c_void_p]
lib.pcre2_match_data_create_from_pattern_8.restype = ctypes.c_void_p
lib.pcre2_match_data_create_from_pattern_8.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
lib.pcre2_match_8.restype = ctypes.c_int
lib.pcre2_match_8.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_void_p]
lib.pcre2_get_ovector_pointer_8.restype = ctypes.POINTER(ctypes.c_size_t)
lib.pcre2_get_ovector_pointer_8.argtypes = [ctypes.c_void_p]

out = []
for case in json.load(sys.stdin):
    pattern = case['pattern'].encode('utf-8')
    flags = 0
    for name in case.get('options', []):
        flags |= OPTIONS[name]
    err, off = ctypes.c_int(), ctypes.c_size_t()
    code = lib.pcre2_compile_8(pattern, len(pattern), flags, ctypes.byref(err), ctypes.byref(off), None)
    if not code:
        out.append('compile error')
        continue
    md = lib.pcre2_match_data_create_from_pattern_8(code, None)
    body = bytes.fromhex(case['body'])
    start = case.get('min', 0)
    rc = lib.pcre2_match_8(code, body, len(body), start, 0, md, None) if start <= len(body) else -1
    matched = rc >= 0 and ('max' not in case or lib.pcre2_get_ovector_pointer_8(md)[0] <= case['max'])
    out.append(matched)
json.dump(out, sys.stdout)
