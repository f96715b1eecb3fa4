/* kli.tools.image._namediff: the names a call bound, rebound or deleted (issue 33).
 *
 * changed(before, after) is kli.tools.image.record._changed_names_py in C: the same names, in
 * the same order. Why C: a kernel's namespace holds 2,000+ names and the diff runs on every
 * recorded call; the pure version touches every key and value object (their refcounts), which
 * in a real kernel means cache misses per name. Here the common case walks the two dicts' entry
 * tables: PyDict_Next gives borrowed references (no refcount is written; on CPython 3.11 it
 * still reads each str key's cached hash, never a value object), and a value is compared by its
 * address.
 *
 * The walk, one entry of each dict per step while both have entries:
 *   - the same key object at the same step: a rebound name when the values differ;
 *   - else one lookup decides which side moved: the before key is not in `after` (deleted: only
 *     `before` steps), or the after key is not in `before` (new: only `after` steps), or both
 *     are in the other (a dict rebuilt in another order, or equal keys that are not the same
 *     object): the rest is decided by a lookup per entry.
 * When one dict runs out, the other's remaining keys are new (or deleted): each key consumed
 * so far was matched to the same object or found missing from the other dict.
 * A new name is appended (`x = 1`) and a rebound one stays in place, so such a cell costs no
 * lookup at all, and a `del` one.
 *
 * Order: the names of `after` that are new or rebound, in `after`'s order, then the deleted
 * ones, in `before`'s order.
 *
 * Lookups compare keys with their __eq__ (any hashable key, as a dict lookup would): that runs
 * Python code, so the keys in use are held (new references) while it runs, a dict whose size
 * changed meanwhile raises RuntimeError as dict iteration does, and an exception from a key's
 * __eq__ or __hash__ propagates. The GIL is held throughout. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* After Python code ran (a key's __eq__ / __hash__): the dicts must be the size they were. */
static int
same_sizes(PyObject *before, Py_ssize_t nb, PyObject *after, Py_ssize_t na)
{
    if (PyDict_GET_SIZE(before) != nb || PyDict_GET_SIZE(after) != na) {
        PyErr_SetString(PyExc_RuntimeError, "dictionary changed size during iteration");
        return 0;
    }
    return 1;
}

/* The rest, from positions pb and pa (each at the entry not yet decided): a lookup per entry.
 * Returns 0, or -1 with an exception set. */
static int
by_lookup(PyObject *before, Py_ssize_t pb, PyObject *after, Py_ssize_t pa,
          Py_ssize_t nb, Py_ssize_t na, PyObject *out, PyObject *deleted)
{
    PyObject *key, *value;

    while (PyDict_Next(after, &pa, &key, &value)) {
        Py_INCREF(key);
        Py_INCREF(value);
        PyObject *old = PyDict_GetItemWithError(before, key); /* borrowed */
        int failed = old == NULL && PyErr_Occurred();
        int changed = !failed && old != value;
        int err = failed || (changed && PyList_Append(out, key) < 0);
        Py_DECREF(value);
        Py_DECREF(key);
        if (err || !same_sizes(before, nb, after, na)) {
            return -1;
        }
    }
    while (PyDict_Next(before, &pb, &key, NULL)) {
        Py_INCREF(key);
        int found = PyDict_Contains(after, key);
        int err = found < 0 || (found == 0 && PyList_Append(deleted, key) < 0);
        Py_DECREF(key);
        if (err || !same_sizes(before, nb, after, na)) {
            return -1;
        }
    }
    return 0;
}

static int
walk(PyObject *before, PyObject *after, PyObject *out, PyObject *deleted)
{
    Py_ssize_t nb = PyDict_GET_SIZE(before), na = PyDict_GET_SIZE(after);
    Py_ssize_t pb = 0, pa = 0;   /* PyDict_Next's positions: past the current entries */
    Py_ssize_t at_b = 0, at_a = 0; /* ... and at them */
    PyObject *kb, *vb, *ka, *va;
    int has_b = PyDict_Next(before, &pb, &kb, &vb);
    int has_a = PyDict_Next(after, &pa, &ka, &va);

    while (has_b && has_a) {
        if (kb == ka) {
            /* No Python code runs here: the borrowed references stay valid. */
            if (vb != va && PyList_Append(out, ka) < 0) {
                return -1;
            }
            at_b = pb;
            at_a = pa;
            has_b = PyDict_Next(before, &pb, &kb, &vb);
            has_a = PyDict_Next(after, &pa, &ka, &va);
            continue;
        }
        Py_INCREF(kb);
        Py_INCREF(ka);
        int b_in_after = PyDict_Contains(after, kb);
        int err = b_in_after < 0;
        int step = 0; /* 1: before steps (kb deleted), 2: after steps (ka new), 0: by lookup */
        if (!err && b_in_after == 0) {
            err = PyList_Append(deleted, kb) < 0;
            step = 1;
        }
        else if (!err) {
            PyObject *old = PyDict_GetItemWithError(before, ka);
            if (old == NULL && PyErr_Occurred()) {
                err = 1;
            }
            else if (old == NULL) {
                err = PyList_Append(out, ka) < 0;
                step = 2;
            }
        }
        Py_DECREF(ka);
        Py_DECREF(kb);
        if (err || !same_sizes(before, nb, after, na)) {
            return -1;
        }
        if (step == 0) {
            /* From the current entries again: their borrowed references may be stale now. */
            return by_lookup(before, at_b, after, at_a, nb, na, out, deleted);
        }
        /* One side steps past its entry; the other reads its current entry again (the
         * borrowed references taken before Python code ran may be stale). */
        if (step == 1) {
            at_b = pb;
        }
        else {
            at_a = pa;
        }
        pb = at_b;
        pa = at_a;
        has_b = PyDict_Next(before, &pb, &kb, &vb);
        has_a = PyDict_Next(after, &pa, &ka, &va);
    }
    for (; has_a; has_a = PyDict_Next(after, &pa, &ka, NULL)) {
        if (PyList_Append(out, ka) < 0) {
            return -1;
        }
    }
    for (; has_b; has_b = PyDict_Next(before, &pb, &kb, NULL)) {
        if (PyList_Append(deleted, kb) < 0) {
            return -1;
        }
    }
    return 0;
}

static PyObject *
changed(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "changed() takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    PyObject *before = args[0], *after = args[1];
    if (!PyDict_Check(before) || !PyDict_Check(after)) {
        PyObject *bad = PyDict_Check(before) ? after : before;
        PyErr_Format(PyExc_TypeError, "changed() arguments must be dicts, not %.200s",
                     Py_TYPE(bad)->tp_name);
        return NULL;
    }
    /* Both lists made before the walk: a GC-tracked allocation may run a collection, and so
     * finalizers, which must not run while borrowed references are in use. */
    PyObject *out = PyList_New(0);
    if (out == NULL) {
        return NULL;
    }
    PyObject *deleted = PyList_New(0);
    if (deleted == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    if (walk(before, after, out, deleted) < 0
        || (PyList_GET_SIZE(deleted) > 0
            && PyList_SetSlice(out, PyList_GET_SIZE(out), PyList_GET_SIZE(out), deleted) < 0)) {
        Py_DECREF(deleted);
        Py_DECREF(out);
        return NULL;
    }
    Py_DECREF(deleted);
    return out;
}

PyDoc_STRVAR(changed_doc,
"changed(before, after, /)\n--\n\n"
"The keys bound, rebound (another value object, by identity) or deleted from dict `before`\n"
"to dict `after`: those of `after` in its order, then the deleted ones in `before`'s order.\n"
"Any hashable keys; an exception from a key's __eq__ or __hash__ propagates. TypeError\n"
"when an argument is not a dict.");

static PyMethodDef namediff_methods[] = {
    {"changed", (PyCFunction)(void (*)(void))changed, METH_FASTCALL, changed_doc},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot namediff_slots[] = {
#ifdef Py_mod_multiple_interpreters
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
    {0, NULL},
};

static struct PyModuleDef namediff_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "kli.tools.image._namediff",
    .m_doc = "The names a call changed in a namespace, in C (kli.tools.image.record).",
    .m_size = 0,
    .m_methods = namediff_methods,
    .m_slots = namediff_slots,
};

PyMODINIT_FUNC
PyInit__namediff(void)
{
    return PyModuleDef_Init(&namediff_module);
}
