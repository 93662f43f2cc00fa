// Not rewritten: application/javascript is in no *_types of this configuration.
var cdn = "//cdn.example.com/", site = "http://mall.example.com", ua = "UA-12345-1";
