#!/usr/bin/php
<?php
// echo_persistent.php: a persistent tool in PHP (persistent: true): one
// call per line on stdin, one answer per line on stdout, with the call's id.
// PHP's warnings go to stderr (the server log), never into the answers.
ini_set('display_errors', 'stderr');
while (($line = fgets(STDIN)) !== false) {
    $call = json_decode($line, true);
    $text = (string)($call['arguments']['text'] ?? '');
    $answer = ['id' => $call['id'], 'content' => [['type' => 'text', 'text' => $text]]];
    fwrite(STDOUT, json_encode($answer, JSON_UNESCAPED_SLASHES) . "\n");
    fflush(STDOUT);
}
