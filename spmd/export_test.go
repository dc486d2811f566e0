package spmd

// ExerciseComm is exported to the external MPI test package.
var ExerciseComm = exerciseComm
