/* plainext: a plain CPython extension in C (no torch, no CUDA) linked to libm. */
#include <Python.h>
#include <math.h>

static PyObject* hypot3(PyObject* self, PyObject* args) {
    double x, y, z;
    (void)self;
    if (!PyArg_ParseTuple(args, "ddd", &x, &y, &z)) return NULL;
    return PyFloat_FromDouble(hypot(hypot(x, y), z));
}

static PyMethodDef methods[] = {
    {"hypot3", hypot3, METH_VARARGS, "Length of the vector (x, y, z)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "plainext", "A plain C extension.", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_plainext(void) { return PyModule_Create(&module); }
