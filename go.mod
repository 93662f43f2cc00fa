module github.com/streamsub/streamsub

go 1.26
