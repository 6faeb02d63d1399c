module svcwebhooks/receiver

go 1.22
